import { type Json, type PrincipalSigner, principalSigner, seedTenancy } from '@meld/fixtures';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { startIngest } from './app.fixture';

/*
 * ADR 0181: each project's `meld-messaging` data source is the messaging app's record of what
 * people said to it (an inbound STOP, an unsubscribe link). A product token with the ingest
 * scopes may use any data source of its project, but not write this one: an `opt-in` written
 * there lifted a STOP (an opt-out wins across sources, ADR 0048, but this one was the opt-out).
 */
describe('the meld-messaging data source (ingest)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let tenancy: Awaited<ReturnType<typeof seedTenancy>>;
  let product: PrincipalSigner;
  let messaging: string;
  const phone = '+33612345678';

  beforeAll(async () => {
    ({ app, base, db } = await startIngest());
    tenancy = await seedTenancy(db);
    product = principalSigner(tenancy, { scopes: ['PROJECT_INGEST_WRITE', 'PROJECT_INGEST_READ'] }, 'ingest');
    [{ id: messaging }] = await db.query(`INSERT INTO data_sources (project_id, uid, name) VALUES ($1, 'meld-messaging', 'Meld messaging') RETURNING id`, [tenancy.project.id]);
    // The contact an inbound STOP leaves (written as the messaging app does, through the shared upsert).
    expect((await call('POST', '/contacts', [{ _user_id: phone, _phone_mobile: phone, _consent_sms: 'opt-out' }])).status).toBe(202);
    await db.query(`UPDATE data_sources SET connector = 'meld-messaging' WHERE id = $1`, [messaging]);
  });
  afterAll(() => app?.close());

  async function call(method: string, path: string, body?: unknown) {
    const url = `${base}/v1/project/${tenancy.project.uid}/datasource/${messaging}/stream${path}`;
    const res = await fetch(url, { method, headers: { ...product(method, url), ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    return { status: res.status, body: (await res.json()) as Json };
  }
  const consent = async () =>
    (await db.query(`SELECT attributes->>'_consent_sms' AS consent FROM source_contacts WHERE data_source_id = $1 AND user_id = $2`, [messaging, phone]))[0]?.consent;

  it('refuses contact and event writes to it with 404 naming why, even from a product token; nothing is written', async () => {
    const why = { statusCode: 404, error: 'Not Found', message: expect.stringMatching(/meld-messaging.*only the messaging app writes/) };
    expect(await call('POST', '/contacts', [{ _user_id: phone, _consent_sms: 'opt-in' }])).toEqual({ status: 404, body: why });
    const event = { _user_id: phone, _event_id: 'e-1', _event_type: 'purchase', _event_parameters: { 'product-id': 'x' } };
    expect(await call('POST', '/events', [{ ...event, _user_data: { _consent_sms: 'opt-in' } }])).toEqual({ status: 404, body: why });
    expect(await call('POST', '/events', [event])).toEqual({ status: 404, body: why });
    expect(await consent()).toBe('opt-out');
    expect(await db.query(`SELECT 1 FROM event_ids WHERE project_id = $1 AND event_id = 'e-1'`, [tenancy.project.id])).toEqual([]);
  });

  it('still reads it and deletes a contact of it (a person\'s erasure covers every data source, ADR 0358)', async () => {
    expect((await call('GET', '')).status).toBe(200);
    expect((await call('DELETE', `/contacts/${encodeURIComponent(phone)}`)).status).toBe(202);
    expect(await consent()).toBeNull();
  });
});
