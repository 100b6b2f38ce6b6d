import type { INestApplication } from '@nestjs/common';
import { startIngest } from './app.fixture';
import type { Json } from '@meld/fixtures';
import { operationsWithoutPostgres503 } from '@meld/testing';

// The gateway merges this document into /v1/openapi.json; it is internal, so no principal.
describe('ingest /openapi.json', () => {
  let app: INestApplication;
  let base: string;
  beforeAll(async () => ({ app, base } = await startIngest()));
  afterAll(() => app?.close());

  it('documents the stream reads and writes with their responses and the error shape', async () => {
    const res = await fetch(`${base}/openapi.json`);
    expect(res.status).toBe(200);
    const doc: Json = await res.json();
    const stream = '/v1/project/{project}/datasource/{datasource}/stream';
    expect(Object.keys(doc.paths).sort()).toEqual([
      stream,
      `${stream}/contacts`,
      `${stream}/contacts/{userId}`,
      `${stream}/events`,
      `${stream}/specs/attributes`,
      `${stream}/specs/events`,
      `${stream}/specs/events/{eventType}`,
    ]);
    expect(Object.keys(doc.paths[stream].get.responses).sort()).toEqual(['200', '401', '404', '429', '503']);
    expect(doc.components.schemas.StreamDescription).toBeDefined();
    for (const path of [`${stream}/contacts`, `${stream}/events`]) {
      expect(Object.keys(doc.paths[path].post.responses).sort()).toEqual(['202', '400', '401', '404', '413', '415', '422', '429', '503']);
      // A batch may come compressed (ADR 0012).
      expect(doc.paths[path].post.parameters).toContainEqual(expect.objectContaining({ name: 'Content-Encoding', in: 'header', required: false, schema: expect.objectContaining({ enum: ['gzip', 'deflate', 'identity'] }) }));
    }
    expect(Object.keys(doc.paths[`${stream}/contacts/{userId}`].delete.responses).sort()).toEqual(['202', '401', '404', '429', '503']);
    // The size caps (ADR 0346) are stated where a client reads the endpoint.
    expect(doc.paths[`${stream}/contacts`].post.description).toContain('at most 256 KiB of attributes');
    expect(doc.paths[`${stream}/events`].post.description).toContain('256 KiB of `_user_data`');
    expect(doc.components.schemas.WriteOutcome).toBeDefined();
  });

  it('documents the 503 with Retry-After of Postgres not answering on every route: each reads the catalogue or writes the outbox there (ADR 0360)', async () => {
    const doc: Json = await (await fetch(`${base}/openapi.json`)).json();
    expect(operationsWithoutPostgres503(doc)).toEqual([]);
  });
});
