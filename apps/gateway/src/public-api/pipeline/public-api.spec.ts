import type { TokenRecord } from '@meld/auth';
import { PUBLIC_ROUTES } from '@meld/contracts';
import { NOT_FOUND_ROUTE, bucketFor } from './public-api';

const route = (id: string) => PUBLIC_ROUTES.find((r) => r.id === id)!;
const token: TokenRecord = { id: 't', kind: 'product', organizationId: 'o1', plan: 'm', scopes: [], projects: ['*'], dataSourceId: null };
const ds = { id: 'd1', projectId: 'p1' };

describe('what a request is counted against', () => {
  it('anonymous callers by IP', () => {
    expect(bucketFor(route('project.read'), undefined, undefined, null, '10.0.0.1')).toEqual({ cls: 'anonymous', subject: 'ip:10.0.0.1', plan: 's' });
  });

  it('organization and class for product routes (and unknown paths)', () => {
    expect(bucketFor(route('project.read'), token, { ok: true, scopes: [] }, null, 'ip')).toEqual({ cls: 'large', subject: 'org:o1', plan: 'm' });
    expect(bucketFor(route('specs.events'), token, { ok: true, scopes: [] }, null, 'ip')).toMatchObject({ cls: 'standard', subject: 'org:o1' });
    expect(bucketFor(NOT_FOUND_ROUTE, token, undefined, null, 'ip')).toMatchObject({ cls: 'standard', subject: 'org:o1' });
  });

  it('data source and route for allowed ingest calls; refusals never touch that data source\'s quota', () => {
    expect(bucketFor(route('stream.read'), token, { ok: true, scopes: [] }, ds, 'ip')).toEqual({ cls: 'ingest', subject: 'ds:d1:stream.read', plan: 'm' });
    expect(bucketFor(route('stream.specs.attributes'), token, { ok: true, scopes: [] }, ds, 'ip').subject).toBe('ds:d1:stream.specs.attributes');
    expect(bucketFor(route('stream.read'), token, { ok: false, status: 404, message: '' }, ds, 'ip')).toEqual({ cls: 'ingest', subject: 'org:o1', plan: 'm' });
  });
});
