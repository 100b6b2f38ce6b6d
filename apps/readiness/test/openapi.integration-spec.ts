import type { Json } from '@meld/fixtures';
import type { INestApplication } from '@nestjs/common';
import { startReadiness } from './app.fixture';

// The gateway merges this document into /v1/openapi.json; it is internal, so no principal.
describe('readiness /openapi.json', () => {
  let app: INestApplication;
  let base: string;
  beforeAll(async () => ({ app, base } = await startReadiness()));
  afterAll(() => app?.close());

  it('documents the two routes with their own refusals: no scope needed (403 is a data-source token), 404 for another channel, 503 while Postgres does not answer', async () => {
    const doc: Json = await (await fetch(`${base}/openapi.json`)).json();
    const project = doc.paths['/v1/project/{project}/readiness'].get;
    const channel = doc.paths['/v1/project/{project}/readiness/channel/{channel}'].get;
    for (const op of [project, channel]) {
      expect(Object.keys(op.responses).sort()).toEqual(['200', '401', '403', '404', '429', '503']);
      expect(Object.keys(op.responses['503'].headers)).toEqual(['Retry-After']);
      expect(op.responses['403'].description).toMatch(/data-source token: readiness needs no scope/);
      expect(op.responses['403'].description).not.toMatch(/lacks a scope/);
      expect(op.responses['404'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
    expect(project.responses['404'].description).toBe('project not found, or not reachable with this token');
    expect(channel.responses['404'].description).toBe('project not found, or not reachable with this token; or a channel other than sms or rcs');
  });
});
