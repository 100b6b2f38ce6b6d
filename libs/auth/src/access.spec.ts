import { PUBLIC_ROUTES, type PublicRoute } from '@meld/contracts';
import { type DataSourceRecord, type ProjectRecord, type TokenRecord, authorize, effectiveScopes } from './access';

const route = (id: string): PublicRoute => PUBLIC_ROUTES.find((r) => r.id === id)!;
const project: ProjectRecord = { id: 'p1', uid: 'shop', organizationId: 'o1', name: 'Shop', dataMode: 'normal' };
const ds: DataSourceRecord = { id: 'd1', projectId: 'p1' };
const product = (over: Partial<TokenRecord> = {}): TokenRecord => ({ id: 't1', kind: 'product', organizationId: 'o1', plan: 's', scopes: [], projects: ['shop'], dataSourceId: null, ...over });
const dsToken = (over: Partial<TokenRecord> = {}): TokenRecord => product({ kind: 'datasource', projects: [], dataSourceId: 'd1', ...over });

describe('authorize', () => {
  it('lets a product token reach its project, with or without "*"', () => {
    expect(authorize(route('project.read'), product(), project, null)).toEqual({ ok: true, scopes: [] });
    expect(authorize(route('project.read'), product({ projects: ['*'] }), project, null).ok).toBe(true);
  });

  it('answers 404 for a project of another organization, one not listed, or none at all', () => {
    for (const [token, p] of [
      [product({ organizationId: 'o2', projects: ['*'] }), project],
      [product({ projects: ['other'] }), project],
      [product(), null],
    ] as const) {
      expect(authorize(route('project.read'), token, p, null)).toMatchObject({ ok: false, status: 404, message: 'project not found' });
    }
  });

  it('names every missing scope (403) only once the project is reachable', () => {
    expect(authorize(route('audience.count'), product(), project, null)).toEqual({
      ok: false,
      status: 403,
      message: 'missing scope: PROJECT_AUDIENCE_READ',
      details: { missingScopes: ['PROJECT_AUDIENCE_READ'] },
    });
    expect(authorize(route('audience.count'), product({ projects: [] }), project, null)).toMatchObject({ status: 404, message: 'project not found' });
    expect(authorize(route('stream.read'), product({ scopes: ['PROJECT_INGEST_READ'] }), project, ds).ok).toBe(true);
  });

  it('says which missing scopes were granted but are not on the organization\'s plan (ADR 0328)', () => {
    const gated = product({ plan: 's', scopes: ['PROJECT_AUDIENCE_READ'], planGatedScopes: ['PROJECT_AUDIENCE_LIST', 'PROJECT_AUDIENCE_DATA_EVENTS'] });
    expect(authorize(route('audience.scroll'), gated, project, null)).toEqual({
      ok: false,
      status: 403,
      message: "missing scope: PROJECT_AUDIENCE_LIST (PROJECT_AUDIENCE_LIST is granted to this token but not included in the organization's plan s)",
      details: { missingScopes: ['PROJECT_AUDIENCE_LIST'], planGatedScopes: ['PROJECT_AUDIENCE_LIST'] },
    });
    expect(authorize(route('event.scroll'), product({ ...gated, scopes: [] }), project, null)).toMatchObject({
      message: expect.stringContaining('(PROJECT_AUDIENCE_DATA_EVENTS, PROJECT_AUDIENCE_LIST are granted to this token but not included'),
      details: { missingScopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_EVENTS', 'PROJECT_AUDIENCE_LIST'], planGatedScopes: ['PROJECT_AUDIENCE_DATA_EVENTS', 'PROJECT_AUDIENCE_LIST'] },
    });
    // A gated scope the route does not need changes nothing.
    expect(authorize(route('audience.count'), gated, project, null)).toEqual({ ok: true, scopes: ['PROJECT_AUDIENCE_READ'] });
  });

  it('keeps a data-source token on the stream routes of its own data source', () => {
    expect(authorize(route('stream.read'), dsToken(), project, ds)).toEqual({ ok: true, scopes: ['PROJECT_INGEST_WRITE', 'PROJECT_INGEST_READ'] });
    expect(authorize(route('stream.read'), dsToken({ dataSourceId: 'd2' }), project, ds)).toMatchObject({ status: 404, message: 'data source not found' });
    expect(authorize(route('stream.read'), dsToken(), project, { id: 'd1', projectId: 'p2' })).toMatchObject({ status: 404 });
    expect(authorize(route('stream.read'), dsToken({ organizationId: 'o2' }), project, ds)).toMatchObject({ status: 404, message: 'project not found' });
    for (const id of ['token.read', 'project.read', 'specs.events']) {
      expect(authorize(route(id), dsToken(), project, null)).toMatchObject({ status: 403, message: expect.stringMatching(/data-source tokens may only call the stream endpoints/) });
    }
  });

  it('cannot be widened: a data-source token has the ingest scopes whatever is stored', () => {
    expect(effectiveScopes({ kind: 'datasource', scopes: ['PROJECT_AUDIENCE_DATA_FULL'] })).toEqual(['PROJECT_INGEST_WRITE', 'PROJECT_INGEST_READ']);
  });

  it('refuses OAuth tokens on ingest routes (the ingest spec names data-source and product tokens) with the ingest API\'s 404', () => {
    expect(authorize(route('stream.read'), product({ kind: 'oauth', scopes: ['PROJECT_INGEST_READ'] }), project, ds)).toMatchObject({ status: 404 });
  });

  it('answers a product token without the ingest scope 404 on a stream route, naming the scope (the ingest spec has no 403)', () => {
    expect(authorize(route('stream.contacts.write'), product({ scopes: ['PROJECT_INGEST_READ'] }), project, ds)).toEqual({
      ok: false,
      status: 404,
      message: 'missing scope: PROJECT_INGEST_WRITE',
      details: { missingScopes: ['PROJECT_INGEST_WRITE'] },
    });
    expect(authorize(route('project.read'), dsToken(), project, null)).toMatchObject({ status: 403 });
  });
});
