import { randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { startIngestWithTenancy } from './app.fixture';

/**
 * `_suppressed_<channel>` is messaging's published copy of its suppression list (ADR 0361): only
 * messaging writes it, on its own data source, through upsertSourceContacts. A data source that
 * wrote `_suppressed_sms: false` (or null) would lift nothing messaging keeps, but a `true` would
 * make a number unreachable that messaging never suppressed: ingest refuses every such name, from
 * a contact write and from an event's `_user_data`, as an item error naming it.
 */
describe('suppression attributes (ingest)', () => {
  let app: INestApplication;
  let db: DataSource;
  let tenancy: Awaited<ReturnType<typeof startIngestWithTenancy>>['tenancy'];
  let post: Awaited<ReturnType<typeof startIngestWithTenancy>>['streamPost'];

  beforeAll(async () => {
    ({ app, db, tenancy, streamPost: post } = await startIngestWithTenancy());
  });
  afterAll(async () => {
    await app?.close();
  });

  const stored = async (userId: string) =>
    (await db.query(`SELECT attributes FROM source_contacts WHERE project_id = $1 AND data_source_id = $2 AND user_id = $3 AND version > 0`, [tenancy.project.id, tenancy.dataSource.id, userId]))[0]
      ?.attributes;
  const refused = (name: string, field = name) => ({ [field]: [`\`${name}\` is kept by Meld messaging: use the suppressions admin API`] });

  it('refuses _suppressed_<channel> in a contact write, whatever the value, naming the attribute; the other items are written', async () => {
    const [a, b, c, ok] = ['a', 'b', 'c', 'ok'].map((k) => `s-${k}-${randomUUID().slice(0, 8)}`);
    const res = await post('contacts', [
      { _user_id: a, _first_name: 'Ann', _suppressed_sms: true },
      { _user_id: b, _suppressed_sms: null },
      { _user_id: c, _suppressed_email: false },
      { _user_id: ok, _first_name: 'Bob' },
    ]);
    expect(res).toMatchObject({
      status: 202,
      body: {
        entity: {
          successful: 1,
          failed: 3,
          items: [
            { status: 'error', _user_id: a, errors: refused('_suppressed_sms') },
            { status: 'error', _user_id: b, errors: refused('_suppressed_sms') },
            { status: 'error', _user_id: c, errors: refused('_suppressed_email') },
            { status: 'success', _user_id: ok },
          ],
        },
      },
    });
    expect([await stored(a), await stored(b), await stored(c), await stored(ok)]).toEqual([undefined, undefined, undefined, { _first_name: 'Bob' }]);
  });

  it('refuses it in an event’s _user_data (422 when every item fails)', async () => {
    const userId = `s-e-${randomUUID().slice(0, 8)}`;
    const event = { _user_id: userId, _event_id: `e-${randomUUID()}`, _event_type: 'purchase', _event_parameters: { 'product-id': 'p1' }, _user_data: { _suppressed_sms: true } };
    const res = await post('events', [event]);
    expect(res).toMatchObject({ status: 422, body: { entity: { failed: 1, items: [{ status: 'error', errors: refused('_suppressed_sms', '_user_data._suppressed_sms') }] } } });
    expect(await stored(userId)).toBeUndefined();
  });
});
