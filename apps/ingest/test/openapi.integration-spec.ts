import type { INestApplication } from '@nestjs/common';
import { startIngest } from './app.fixture';
import type { Json } from './tenancy.fixture';

// The gateway merges this document into /v1/openapi.json; it is internal, so no principal.
describe('ingest /openapi.json', () => {
  let app: INestApplication;
  let base: string;
  beforeAll(async () => ({ app, base } = await startIngest()));
  afterAll(() => app?.close());

  it('documents the stream reads with their responses and the error shape', async () => {
    const res = await fetch(`${base}/openapi.json`);
    expect(res.status).toBe(200);
    const doc: Json = await res.json();
    const stream = '/v1/project/{project}/datasource/{datasource}/stream';
    expect(Object.keys(doc.paths).sort()).toEqual([stream, `${stream}/specs/attributes`, `${stream}/specs/events`, `${stream}/specs/events/{eventType}`]);
    expect(Object.keys(doc.paths[stream].get.responses).sort()).toEqual(['200', '401', '403', '404', '429']);
    expect(doc.components.schemas.StreamDescription).toBeDefined();
  });
});
