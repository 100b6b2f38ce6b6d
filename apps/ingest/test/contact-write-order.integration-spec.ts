import { randomUUID } from 'node:crypto';
import { Topics } from '@meld/contracts';
import { type Json, collectTopic } from '@meld/fixtures';
import { WriteContacts } from '../src/contacts/usecases/write-contacts/write-contacts.usecase';
import { WriteEvents } from '../src/events/usecases/write-events/write-events.usecase';
import { startIngestWithTenancy } from './app.fixture';

const HOUR = 3600_000;
type Collector = Awaited<ReturnType<typeof collectTopic>>;

/*
 * ADR 0349: writes to one contact apply in the order they reached its row lock, whatever the
 * clock of the ingest replica that took them. A replica's clock is what `receivedAt` carries:
 * the writes below go through the use cases with the `receivedAt` a slow (or fast) replica would give.
 */
describe('the order of writes to one contact (ADR 0349)', () => {
  let ingest: Awaited<ReturnType<typeof startIngestWithTenancy>>;
  /** The contact messages and the erase markers of the suite's project. */
  let topics: { contacts: Collector; erases: Collector };

  beforeAll(async () => {
    ingest = await startIngestWithTenancy();
    const ofProject = (v: Json) => v?.projectId === ingest.tenancy.project.id;
    const [contacts, erases] = await Promise.all([collectTopic(Topics.contacts, ofProject), collectTopic(Topics.events, (v) => ofProject(v) && v?.kind === 'erase')]);
    topics = { contacts, erases };
  });
  afterAll(async () => {
    await Promise.all([topics?.contacts.stop(), topics?.erases.stop()]);
    await ingest?.app.close();
  });

  const uid = () => `u-${randomUUID().slice(0, 8)}`;
  /** A replica's clock is given as an offset from this, Date.now() at the start of the test, so one test's writes compare as given. */
  let start = 0;
  beforeEach(() => {
    start = Date.now();
  });
  const command = (body: unknown[], clockOffsetMs: number) => ({
    organizationId: ingest.tenancy.organization.id,
    projectId: ingest.tenancy.project.id,
    dataSourceId: ingest.tenancy.dataSource.id,
    tokenDataSourceId: ingest.tenancy.dataSource.id,
    body,
    receivedAt: new Date(start + clockOffsetMs).toISOString(),
  });
  /** A contact write taken by a replica whose clock is `clockOffsetMs` off. */
  const write = async (clockOffsetMs: number, item: Record<string, unknown>) =>
    expect((await ingest.app.get(WriteContacts).execute(command([item], clockOffsetMs))).status).toBe(202);
  /** An event write taken by a replica whose clock is `clockOffsetMs` off. */
  const event = async (clockOffsetMs: number, item: Record<string, unknown>) =>
    expect(
      (await ingest.app.get(WriteEvents).execute(command([{ _event_id: `e-${randomUUID()}`, _event_type: 'purchase', _event_parameters: { 'product-id': 'sku-1' }, ...item }], clockOffsetMs))).status,
    ).toBe(202);
  const row = async (userId: string): Promise<{ attributes: Json; attribute_at: Record<string, string>; version: number }> =>
    (await ingest.db.query(`SELECT attributes, attribute_at, version::int AS version FROM source_contacts WHERE project_id = $1 AND data_source_id = $2 AND user_id = $3`, [ingest.tenancy.project.id, ingest.tenancy.dataSource.id, userId]))[0];

  it('a later write taken by a replica whose clock is behind wins, and its message is later', async () => {
    const id = uid();
    await write(0, { _user_id: id, _first_name: 'A', loyalty_tier: 'gold' });
    await write(-50, { _user_id: id, _first_name: 'B', loyalty_tier: null });
    expect(await row(id)).toMatchObject({ attributes: { _first_name: 'B' }, version: 2 });
    const published = await topics.contacts.waitFor(2, (m) => m.value.userId === id);
    expect(published.map((m) => m.value.version)).toEqual([1, 2]);
    expect(published[1].value.at > published[0].value.at).toBe(true);
  });

  it('a write taken by a replica whose clock is ahead holds off no later write', async () => {
    const id = uid();
    await write(HOUR, { _user_id: id, _first_name: 'Ahead' });
    // Stamped by Postgres' clock, not an hour ahead.
    expect(Date.parse((await row(id)).attribute_at._first_name)).toBeLessThan(Date.now() + 60_000);
    await write(0, { _user_id: id, _first_name: 'Later' });
    expect((await row(id)).attributes).toEqual({ _first_name: 'Later' });
  });

  it('a time stored ahead of Postgres\' clock (a clock stepped back) is followed, not waited for', async () => {
    const id = uid();
    await write(0, { _user_id: id, _first_name: 'Before' });
    const ahead = new Date(Date.now() + HOUR).toISOString();
    await ingest.db.query(`UPDATE source_contacts SET attribute_at = jsonb_build_object('_first_name', $4::text) WHERE project_id = $1 AND data_source_id = $2 AND user_id = $3`, [
      ingest.tenancy.project.id,
      ingest.tenancy.dataSource.id,
      id,
      ahead,
    ]);
    await write(0, { _user_id: id, _first_name: 'After', _last_name: 'Too' });
    const after = new Date(Date.parse(ahead) + 1).toISOString();
    expect(await row(id)).toMatchObject({ attributes: { _first_name: 'After', _last_name: 'Too' }, attribute_at: { _first_name: after, _last_name: after } });
  });

  it('an event dated before a direct write loses to it, whatever the clock of the replica that took the write', async () => {
    const id = uid();
    // Applied now, by a replica two hours behind.
    await write(-2 * HOUR, { _user_id: id, _first_name: 'Now' });
    await event(0, { _user_id: id, _event_date: new Date(start - HOUR).toISOString(), _user_data: { _first_name: 'Old', _last_name: 'Kept' } });
    expect((await row(id)).attributes).toEqual({ _first_name: 'Now', _last_name: 'Kept' });
  });

  it('an event dated now is a direct write: taken by a replica whose clock is behind, it wins over the write before it', async () => {
    const id = uid();
    await write(0, { _user_id: id, _first_name: 'Before' });
    await event(-50, { _user_id: id, _user_data: { _first_name: 'Event' } });
    expect((await row(id)).attributes).toEqual({ _first_name: 'Event' });
  });

  it('an event dated in the past but ahead of Postgres\' clock (its replica is ahead) holds off no later write', async () => {
    const id = uid();
    await event(2 * HOUR, { _user_id: id, _event_date: new Date(start + HOUR).toISOString(), _user_data: { _first_name: 'Event' } });
    expect((await row(id)).attributes).toEqual({ _first_name: 'Event' });
    await write(0, { _user_id: id, _first_name: 'Later' });
    expect((await row(id)).attributes).toEqual({ _first_name: 'Later' });
  });

  it('a delete follows the write before it, and a re-creating write by a replica whose clock is behind follows the delete', async () => {
    const id = uid();
    await write(HOUR, { _user_id: id, _email: 'gone@example.com' });
    const target = `${ingest.base}/v1/project/${ingest.tenancy.project.uid}/datasource/${ingest.tenancy.dataSource.id}/stream/contacts/${encodeURIComponent(id)}`;
    expect((await fetch(target, { method: 'DELETE', headers: ingest.dsToken('DELETE', target) })).status).toBe(202);
    await write(-HOUR, { _user_id: id, _first_name: 'Back' });
    expect(await row(id)).toMatchObject({ attributes: { _first_name: 'Back' }, version: 3 });
    const published = await topics.contacts.waitFor(3, (m) => m.value.userId === id);
    expect(published.map((m) => [m.value.kind, m.value.version])).toEqual([['upsert', 1], ['delete', 2], ['upsert', 3]]);
    const [created, deleted, recreated] = published.map((m) => m.value.at as string);
    expect([deleted > created, recreated > deleted]).toEqual([true, true]);
    const [erase] = await topics.erases.waitFor(1, (m) => m.value.userId === id);
    expect(erase.value.at).toBe(deleted);
  });
});
