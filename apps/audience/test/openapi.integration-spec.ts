import type { INestApplication } from '@nestjs/common';
import { startAudience } from './app.fixture';
import type { Json } from '@meld/fixtures';
import { operationsWithoutPostgres503 } from '@meld/testing';

// The gateway merges this document into /v1/openapi.json; it is internal, so no principal.
describe('audience /openapi.json', () => {
  let app: INestApplication;
  let base: string;
  beforeAll(async () => ({ app, base } = await startAudience()));
  afterAll(() => app?.close());

  it('documents the public routes of the app with their responses and the error shape', async () => {
    const res = await fetch(`${base}/openapi.json`);
    expect(res.status).toBe(200);
    const doc: Json = await res.json();
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/v1/project/{project}',
      '/v1/project/{project}/audience/aggregations',
      '/v1/project/{project}/audience/count',
      '/v1/project/{project}/audience/scroll',
      '/v1/project/{project}/audience/search',
      '/v1/project/{project}/audience/search/email/{userEmail}',
      '/v1/project/{project}/audience/search/phone/{phone}',
      '/v1/project/{project}/audience/user/{userId}',
      '/v1/project/{project}/audience/{audienceId}/events',
      '/v1/project/{project}/channel/rcs/sender',
      '/v1/project/{project}/channel/sms/sender',
      '/v1/project/{project}/datasource',
      '/v1/project/{project}/event/aggregations',
      '/v1/project/{project}/event/scroll',
      '/v1/project/{project}/event/search',
      '/v1/project/{project}/segment',
      '/v1/project/{project}/segment/{segmentId}',
      '/v1/project/{project}/segment/{segmentId}/count',
      '/v1/project/{project}/specs/attributes',
      '/v1/project/{project}/specs/events',
      '/v1/project/{project}/specs/events/{eventType}',
    ]);
    const read = doc.paths['/v1/project/{project}'].get;
    expect(Object.keys(read.responses).sort()).toEqual(['200', '401', '403', '404', '429', '503']);
    expect(read.responses['404'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    expect(doc.components.schemas.ProjectRead).toBeDefined();
    expect((await fetch(`${base}/v1/project/x`)).status).toBe(401);
  });

  it('documents the 422 and 503 of a ClickHouse read past its limits on every route that makes one, the 503 also of Postgres not answering (ADRs 0114, 0360)', async () => {
    const doc: Json = await (await fetch(`${base}/openapi.json`)).json();
    const reads: Array<[string, string]> = [
      ['post', '/v1/project/{project}/audience/count'],
      ['get', '/v1/project/{project}/segment/{segmentId}/count'],
      ['get', '/v1/project/{project}/audience/{audienceId}/events'],
      ['post', '/v1/project/{project}/audience/scroll'],
      ['post', '/v1/project/{project}/audience/search'],
      ['post', '/v1/project/{project}/audience/aggregations'],
      ['post', '/v1/project/{project}/event/scroll'],
      ['post', '/v1/project/{project}/event/search'],
      ['post', '/v1/project/{project}/event/aggregations'],
    ];
    for (const [method, path] of reads) {
      const responses = doc.paths[path][method].responses;
      expect([path, responses['422']?.description, responses['503']?.description]).toEqual([path, expect.stringMatching(/max_memory_usage/), expect.stringMatching(/Postgres did not answer.*Retry-After/)]);
      expect(responses['503'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    }
  });

  it('documents the 503 with Retry-After of Postgres not answering on every route: each reads the project or its data there (ADR 0360)', async () => {
    const doc: Json = await (await fetch(`${base}/openapi.json`)).json();
    expect(operationsWithoutPostgres503(doc)).toEqual([]);
  });
});
