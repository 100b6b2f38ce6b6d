import { randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { startIngestWithTenancy } from './app.fixture';

/**
 * Values as ingest stores them: what the audience's look-ups later compare (search by email,
 * `matches-string`) must be the value without what the checks let through around it.
 */
describe('contact values as stored (ingest)', () => {
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

  const attributes = async (userId: string): Promise<Record<string, unknown> | undefined> =>
    (await db.query(`SELECT attributes FROM source_contacts WHERE project_id = $1 AND data_source_id = $2 AND user_id = $3`, [tenancy.project.id, tenancy.dataSource.id, userId]))[0]
      ?.attributes;
  const uid = () => `v-${randomUUID().slice(0, 8)}`;

  /** The email as stored after a contact write and after an event's `_user_data`. */
  async function storedEmail(sent: string): Promise<Array<Record<string, unknown> | undefined>> {
    const [written, withEvent] = [uid(), uid()];
    expect(await post('contacts', [{ _user_id: written, _email: sent }])).toMatchObject({ status: 202, body: { entity: { successful: 1 } } });
    const event = { _user_id: withEvent, _event_id: `e-${randomUUID()}`, _event_type: 'purchase', _event_parameters: { 'product-id': 'p1' }, _user_data: { _email: sent } };
    expect(await post('events', [event])).toMatchObject({ status: 202, body: { entity: { successful: 1 } } });
    return [await attributes(written), await attributes(withEvent)];
  }

  it('stores an email accepted with blanks around it without them, from a contact write and from an event’s _user_data', async () => {
    const stored = { _email: 'Ada.Lovelace@Example.com' };
    expect(await storedEmail('  Ada.Lovelace@Example.com\t')).toEqual([stored, stored]);
  });

  it('stores an email in Unicode NFC: a decomposed accent (e + U+0301) is stored as the composed é the audience searches with', async () => {
    const stored = { _email: 'Ren\u00e9e@example.org' };
    expect(await storedEmail('Rene\u0301e@example.org')).toEqual([stored, stored]);
  });

  it('refuses an email longer than 254 characters (RFC 5321) as an item error naming it: 2,048 CJK characters outgrew the audience email index and its contact never merged', async () => {
    const local = Array.from({ length: 2040 }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 7919) % 20000))).join('');
    const [long, longest] = [uid(), uid()];
    const res = await post('contacts', [
      { _user_id: long, _email: `${local}@x.com` },
      { _user_id: longest, _email: `${'a'.repeat(248)}@x.com` },
    ]);
    expect(res.body.entity).toMatchObject({ successful: 1, failed: 1, items: [{ status: 'error', errors: { _email: [expect.stringMatching(/at most 254 characters/)] } }, { status: 'success' }] });
    expect([await attributes(long), await attributes(longest)]).toEqual([undefined, { _email: `${'a'.repeat(248)}@x.com` }]);
  });
});
