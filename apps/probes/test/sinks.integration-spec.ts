import { randomUUID } from 'node:crypto';
import { type ClickHouse, raw, sql } from '@meld/clickhouse';
import { Topics, keys, slotColumn, slotKindOf, slotMaskColumn, type AttributeType, type AudienceChange, type EventAccepted, type EventsErased } from '@meld/contracts';
import { AttributeEntity, DATA_SOURCE, ProjectEntity } from '@meld/db';
import { seedTenancy } from '@meld/fixtures';
import { createProducer, type Producer } from '@meld/kafka';
import { migratedTestClickHouse, testEnv, waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { MembershipRepository } from '../src/sinks/membership.repository';
import { awaitPositioned, startProbes } from './app.fixture';
import { snapshotChange } from './audience-change';

/** The probes app in-process: meld.events.v1 and meld.audience.v1 in, ClickHouse rows out. */
describe('probes ClickHouse sinks', () => {
  let app: INestApplication;
  let producer: Producer;
  let ch: ClickHouse;
  let members: MembershipRepository;
  let db: DataSource;
  const projectId = randomUUID();
  const ds1 = randomUUID();
  const ds2 = randomUUID();

  beforeAll(async () => {
    const env = testEnv();
    ch = await migratedTestClickHouse();
    members = new MembershipRepository(ch);
    ({ app } = await startProbes());
    db = app.get<DataSource>(DATA_SOURCE);
    await waitFor('probes connected to Postgres', async () => db.isInitialized);
    producer = createProducer({ brokers: env.kafkaBrokers, clientId: 'probes-test' });
    const canary = randomUUID();
    await awaitPositioned('events', () => sendEvents([event(ds1, 'canary', canary)]), async () => (await ch.query(sql`SELECT 1 FROM events WHERE project_id = ${projectId} AND event_id = ${canary}`)).length > 0);
    const canaryAudience = randomUUID();
    await awaitPositioned('audience', () => sendAudience([snapshotChange(projectId, canaryAudience, [`${ds1}/canary`], '2026-11-20T09:00:00.000Z')]), async () => (await memberRefs(canaryAudience)).length > 0);
  }, 90000);

  afterAll(async () => {
    await producer?.disconnect();
    await app?.close();
    await ch?.close();
  });

  const event = (dataSourceId: string, userId: string, eventId: string, over: Partial<EventAccepted> = {}): EventAccepted => ({
    schemaVersion: 1,
    projectId,
    dataSourceId,
    userId,
    eventId,
    eventType: 'purchase',
    eventDate: '2026-11-20T10:00:00.000Z',
    receivedAt: '2026-11-20T10:00:01.000Z',
    parameters: { amount: 12.5, 'product-id': 'p-1' },
    ...over,
  });
  const sendEvents = (events: EventAccepted[]) =>
    producer.send(
      Topics.events,
      events.map((e) => ({ key: keys.sourceContact(e.projectId, e.dataSourceId, e.userId), value: e })),
    );
  const sendAudience = (messages: AudienceChange[]) => producer.send(Topics.audience, messages.map((m) => ({ key: keys.audienceContact(m.projectId, m.audienceId), value: m })));
  const memberRefs = async (audienceId: string) => ((await members.currentMembersOfMany(projectId, [audienceId])).get(audienceId) ?? []).map((m) => `${m.dataSourceId}/${m.userId}`).sort();

  it('stores an event produced twice once, with its parameters as JSON values', async () => {
    const e = event(ds1, 'u-dup', `ev-${randomUUID()}`);
    await sendEvents([e]);
    await sendEvents([e, event(ds1, 'u-dup', `ev-${randomUUID()}`)]);
    await waitFor('both events stored', async () => {
      const [r] = await ch.query<{ n: string }>(sql`SELECT uniqExact(event_id) AS n FROM events WHERE project_id = ${projectId} AND user_id = 'u-dup'`);
      return Number(r.n) >= 2;
    });
    const [final] = await ch.query<{ n: string }>(sql`SELECT count() AS n FROM events FINAL WHERE project_id = ${projectId} AND event_id = ${e.eventId}`);
    expect(Number(final.n)).toBe(1);
    const [distinct] = await ch.query<{ n: string }>(sql`SELECT uniqExact(event_id) AS n FROM events WHERE project_id = ${projectId} AND user_id = 'u-dup'`);
    expect(Number(distinct.n)).toBe(2);
    const [row] = await ch.query<{ param_keys: string[]; param_values: string[]; ts: string }>(
      sql`SELECT param_keys, param_values, toUInt32(event_date) AS ts FROM events WHERE project_id = ${projectId} AND event_id = ${e.eventId} LIMIT 1`,
    );
    expect(row.param_keys).toEqual(['amount', 'product-id']);
    expect(row.param_values.map((v) => JSON.parse(v))).toEqual([12.5, 'p-1']);
    expect(Number(row.ts)).toBe(Date.parse(e.eventDate) / 1000);
  });

  it("forgets a deleted contact's events at its erase marker and keeps those of the contact re-created after it", async () => {
    const before = [event(ds1, 'u-erase', `ev-${randomUUID()}`), event(ds1, 'u-erase', `ev-${randomUUID()}`)];
    const other = event(ds1, 'u-kept', `ev-${randomUUID()}`);
    const after = event(ds1, 'u-erase', `ev-${randomUUID()}`);
    const erase: EventsErased = { schemaVersion: 1, kind: 'erase', projectId, dataSourceId: ds1, userId: 'u-erase', version: 2, at: '2026-11-20T10:00:02.000Z' };
    // One send, in order on the contact's key: the events, the marker, the re-created contact's event.
    await producer.send(Topics.events, [...before, other, erase, after].map((m) => ({ key: keys.sourceContact(projectId, m.dataSourceId, m.userId), value: m })));
    const ids = async (userId: string) =>
      (await ch.query<{ event_id: string }>(sql`SELECT DISTINCT event_id FROM events WHERE project_id = ${projectId} AND user_id = ${userId}`)).map((r) => r.event_id).sort();
    // The mutation runs in the background: wait for it.
    await waitFor('the old events erased', async () => JSON.stringify(await ids('u-erase')) === JSON.stringify([after.eventId]), { timeoutMs: 30000 });
    expect(await ids('u-kept')).toEqual([other.eventId]);
  });

  it('follows merges, splits and tombstones of the audience contacts', async () => {
    const a = randomUUID();
    const b = randomUUID();
    const c1 = `${ds1}/alice`;
    const c2 = `${ds2}/ali/ce`; // a _user_id may hold '/'
    await sendAudience([snapshotChange(projectId, a, [c1], '2026-11-20T10:00:00.000Z'), snapshotChange(projectId, b, [c2], '2026-11-20T10:00:00.000Z')]);
    await waitFor('two audience contacts', async () => (await memberRefs(a)).length === 1 && (await memberRefs(b)).length === 1);

    // Merge: b absorbed into a (the survivor's snapshot lists both; b is tombstoned in the same step).
    const merged = '2026-11-20T10:01:00.000Z';
    await sendAudience([{ schemaVersion: 1, kind: 'tombstone', projectId, audienceId: b, version: 2, at: merged }, snapshotChange(projectId, a, [c1, c2].sort(), merged)]);
    await waitFor('merged', async () => (await memberRefs(a)).length === 2);
    expect(await memberRefs(b)).toEqual([]);

    // Split: c2 leaves a for a new audience contact.
    const c = randomUUID();
    const split = '2026-11-20T10:02:00.000Z';
    await sendAudience([snapshotChange(projectId, c, [c2], split), snapshotChange(projectId, a, [c1], split)]);
    await waitFor('split', async () => JSON.stringify(await memberRefs(a)) === JSON.stringify([c1]) && (await memberRefs(c)).length === 1);
    expect(await memberRefs(c)).toEqual([c2]);

    // An older snapshot arriving late changes nothing.
    await sendAudience([snapshotChange(projectId, a, [c1, c2].sort(), merged)]);
    // Tombstone: nobody left in a.
    await sendAudience([{ schemaVersion: 1, kind: 'tombstone', projectId, audienceId: a, version: 9, at: '2026-11-20T10:03:00.000Z' }]);
    await waitFor('tombstoned', async () => (await memberRefs(a)).length === 0);
    expect(await memberRefs(c)).toEqual([c2]);
  });

  it('reads the stored members for a message without removedDsContactIds after the earlier messages of its id, in one send', async () => {
    const a = randomUUID();
    const [c1, c2, c3] = [`${ds1}/legacy-1`, `${ds2}/legacy-2`, `${ds1}/legacy/3`];
    // One send on one key: the sink takes the three in one batch (ADR 0339), or in consecutive ones.
    await sendAudience([snapshotChange(projectId, a, [c1, c2], '2026-11-20T10:10:00.000Z'), snapshotChange(projectId, a, [c1, c3], '2026-11-20T10:11:00.000Z'), snapshotChange(projectId, a, [c3], '2026-11-20T10:12:00.000Z')]);
    // c2 leaves only if the second message read the first's rows, c1 only if the third read the second's.
    await waitFor('only c3 left', async () => JSON.stringify(await memberRefs(a)) === JSON.stringify([c3]));
  });

  it('applies the removals identity-merge lists (removedDsContactIds) without reading the members', async () => {
    const [a, b, d, e] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const [c1, c2, c3] = [`${ds1}/r-1`, `${ds2}/r-2`, `${ds1}/r/3`];
    const step = (audienceId: string, dsContactIds: string[], removed: string[], at: string) => snapshotChange(projectId, audienceId, dsContactIds, at, removed);
    const tomb = (audienceId: string, removed: string[], at: string): AudienceChange => ({ schemaVersion: 1, kind: 'tombstone', projectId, audienceId, version: 9, at, removedDsContactIds: removed });
    const t = (m: number) => `2026-11-20T11:0${m}:00.000Z`;
    await sendAudience([step(a, [c1, c2], [], t(0)), step(b, [c3], [], t(0))]);
    // Merge (b absorbed, its tombstone delivered first), delete of c2, then a split of c3 into d.
    await sendAudience([tomb(b, [c3], t(1)), step(a, [c1, c2, c3], [], t(1))]);
    await sendAudience([step(a, [c1, c3], [c2], t(2))]);
    await sendAudience([step(d, [c3], [], t(3)), step(a, [c1], [c3], t(3))]);
    await waitFor('split', async () => JSON.stringify(await memberRefs(a)) === JSON.stringify([c1]) && (await memberRefs(d)).length === 1);
    expect(await memberRefs(b)).toEqual([]);
    expect(await memberRefs(d)).toEqual([c3]);
    // A removal of a contact the sink never stored as a member is written as stated: nothing was read.
    await sendAudience([step(e, [`${ds2}/r-4`], [`${ds2}/never-stored`], t(4))]);
    await waitFor('removal row', async () => (await ch.query(sql`SELECT 1 FROM audience_membership WHERE project_id = ${projectId} AND user_id = 'never-stored' AND deleted = 1`)).length === 1);
    await sendAudience([tomb(a, [c1], t(5))]);
    await waitFor('tombstoned', async () => (await memberRefs(a)).length === 0);
    expect(await memberRefs(d)).toEqual([c3]);
  });

  it('stores a burst of audience messages', async () => {
    const ids = Array.from({ length: 300 }, () => randomUUID());
    const at = '2026-11-20T12:00:00.000Z';
    await sendAudience(ids.map((id, i) => snapshotChange(projectId, id, [`${ds1}/burst-${i}`], at, [])));
    await waitFor('every member stored', async () => {
      const [r] = await ch.query<{ n: string }>(sql`SELECT count() AS n FROM audience_membership WHERE project_id = ${projectId} AND startsWith(user_id, 'burst-')`);
      return Number(r.n) === ids.length;
    });
    expect(await memberRefs(ids[299])).toEqual([`${ds1}/burst-299`]);
  });

  describe('audience_contacts', () => {
    interface ContactRow {
      version: string;
      deleted: number;
      str_keys: string[];
      str_values: string[];
      num_keys: string[];
      num_values: number[];
      channels: string[];
    }
    const current = async (project: string, audienceId: string): Promise<ContactRow | undefined> =>
      (
        await ch.query<ContactRow>(
          sql`SELECT version, deleted, str_keys, str_values, num_keys, num_values, channels FROM audience_contacts FINAL WHERE project_id = ${project} AND audience_id = ${audienceId}`,
        )
      )[0];
    /** Each attribute's slot column value in the current row (by its Postgres slot; null when its mask bit is clear), or 'no slot'. */
    const slotted = async (project: string, audienceId: string, uids: string[]): Promise<Record<string, unknown>> => {
      const slots: Array<{ uid: string; type: AttributeType; slot: number | null }> = await db.query(`SELECT uid, type, slot FROM attributes WHERE project_id = $1 AND uid = ANY($2)`, [project, uids]);
      const columns = slots.filter((a) => a.slot !== null).map((a) => slotColumn(slotKindOf(a.type), a.slot!));
      const [row] = await ch.query<Record<string, unknown>>(
        sql`SELECT str_slots, num_slots, ${raw(columns.join(', '))} FROM audience_contacts FINAL WHERE project_id = ${project} AND audience_id = ${audienceId}`,
      );
      const value = (a: { type: AttributeType; slot: number }) => {
        const kind = slotKindOf(a.type);
        return (Number(row[slotMaskColumn(kind)]) & (2 ** a.slot)) !== 0 ? row[slotColumn(kind, a.slot)] : null;
      };
      return Object.fromEntries(slots.map((a) => [a.uid, a.slot === null ? 'no slot' : value({ type: a.type, slot: a.slot })]));
    };
    const typed = (r: ContactRow) => ({
      str: r.str_keys.map((k, i) => `${k}=${r.str_values[i]}`).sort(),
      num: r.num_keys.map((k, i) => `${k}=${r.num_values[i]}`).sort(),
    });
    const contactSnapshot = (project: string, audienceId: string, version: number, at: string, attributes: Record<string, unknown>, dataSources: string[] = []): AudienceChange =>
      ({ schemaVersion: 1, kind: 'snapshot', projectId: project, audienceId, version, at, attributes, dataSources, dsContactIds: [] }) as AudienceChange;
    const tombstone = (project: string, audienceId: string, version: number, at: string): AudienceChange => ({ schemaVersion: 1, kind: 'tombstone', projectId: project, audienceId, version, at });

    it('types values by the catalogue, one entry per value, and derives the channels', async () => {
      const { project, dataSource } = await seedTenancy(db, 'probes');
      await db.getRepository(ProjectEntity).update({ id: project.id }, { locale: 'fr_FR' });
      await db.getRepository(AttributeEntity).insert([
        { projectId: project.id, uid: 'vip', label: 'VIP', type: 'boolean' },
        { projectId: project.id, uid: 'score', label: 'Score', type: 'number' },
        { projectId: project.id, uid: 'sizes', label: 'Sizes', type: 'number', multivalue: true },
        { projectId: project.id, uid: 'tags', label: 'Tags', type: 'string', multivalue: true },
        { projectId: project.id, uid: 'last_order_at', label: 'Last order', type: 'datetime' },
      ]);
      const [mobile, fixed, bare] = [randomUUID(), randomUUID(), randomUUID()];
      const at = '2026-11-20T10:00:00.000Z';
      const createdAt = '2026-11-18T07:45:30.250Z';
      await sendAudience([
        {
          ...contactSnapshot(
            project.id,
            mobile,
            1,
            at,
            {
              _user_id: 'u1',
              _email: 'Ann@Example.com',
              _phone_mobile: '06 12 34 56 78',
              _birthday: '1990-05-17',
              _consent_sms: 'opt-in',
              vip: true,
              score: 12.5,
              sizes: [38, 40],
              tags: ['a', 'b'],
              last_order_at: '2026-11-19T23:30:00.750+01:00',
              unknown_text: 'x',
              unknown_number: 7,
              unknown_flag: false,
            },
            [dataSource.id],
          ),
          createdAt,
        } as AudienceChange,
        contactSnapshot(project.id, fixed, 1, at, { _user_id: 'u2', _email: 'not-an-email', _phone_mobile: '01 23 45 67 89' }),
        contactSnapshot(project.id, bare, 1, at, { _user_id: 'u3', _phone_mobile: '+33 6 12' }),
      ]);
      const row = await waitFor('typed row', () => current(project.id, mobile));
      expect(typed(row)).toEqual({
        str: [`_datasources=${dataSource.id}`, '_consent_sms=opt-in', '_email=Ann@Example.com', '_phone_mobile=06 12 34 56 78', '_user_id=u1', 'tags=a', 'tags=b', 'unknown_text=x'].sort(),
        num: [
          `_birthday=${Date.UTC(1990, 4, 17) / 1000}`,
          // The times Meld maintains, from the snapshot: the audience filters select contacts by them.
          `_created_at=${Date.UTC(2026, 10, 18, 7, 45, 30) / 1000}`,
          `_updated_at=${Date.parse(at) / 1000}`,
          `last_order_at=${Date.UTC(2026, 10, 19, 22, 30, 0) / 1000}`,
          'score=12.5',
          'sizes=38',
          'sizes=40',
          'unknown_flag=0',
          'unknown_number=7',
          'vip=1',
        ].sort(),
      });
      expect(row.channels).toEqual(['email', 'rcs', 'sms', 'whatsapp']);
      expect(Number(row.deleted)).toBe(0);
      // Single-valued attributes also fill their slot column (Postgres numbers them per kind); multivalue ones have none.
      expect(await slotted(project.id, mobile, ['_email', '_user_id', 'vip', 'score', 'last_order_at', 'sizes', 'tags', '_first_name'])).toEqual({
        _email: 'Ann@Example.com',
        _user_id: 'u1',
        vip: 1,
        score: 12.5,
        last_order_at: Date.UTC(2026, 10, 19, 22, 30, 0) / 1000,
        sizes: 'no slot',
        tags: 'no slot',
        _first_name: null,
      });
      // A fixed line and a malformed email reach no channel; neither does a number too short to be valid.
      expect((await waitFor('fixed line row', () => current(project.id, fixed))).channels).toEqual([]);
      expect((await waitFor('bare row', () => current(project.id, bare))).channels).toEqual([]);

      // An attribute created after the catalogue was cached is typed (its step comes after it: refresh on an unknown key).
      await db.getRepository(AttributeEntity).insert({ projectId: project.id, uid: 'renewal', label: 'Renewal', type: 'date' });
      const renewedAt = new Date().toISOString();
      await sendAudience([contactSnapshot(project.id, mobile, 2, renewedAt, { _user_id: 'u1', renewal: '2027-01-02' })]);
      const renewed = await waitFor('renewal typed', async () => {
        const r = await current(project.id, mobile);
        return r && r.num_keys.includes('renewal') ? r : undefined;
      });
      expect(typed(renewed)).toEqual({ str: ['_user_id=u1'], num: [`_updated_at=${Math.floor(Date.parse(renewedAt) / 1000)}`, `renewal=${Date.UTC(2027, 0, 2) / 1000}`] });
      expect(await slotted(project.id, mobile, ['renewal', '_email'])).toEqual({ renewal: Date.UTC(2027, 0, 2) / 1000, _email: null });
      expect(renewed.channels).toEqual([]);
    });

    it('keeps the newest state per audience id: tombstones win over older snapshots, a re-created id over older tombstones', async () => {
      const p = randomUUID();
      const [a, b] = [randomUUID(), randomUUID()];
      const t = (s: number) => new Date(Date.UTC(2026, 10, 20, 11, 0, s)).toISOString();
      // Delivered out of order: the tombstone first, then the snapshot it ended.
      await sendAudience([tombstone(p, a, 3, t(2)), contactSnapshot(p, a, 2, t(1), { _user_id: 'late' })]);
      // Same step time, higher version wins; a snapshot after a tombstone of an earlier step revives.
      await sendAudience([contactSnapshot(p, b, 4, t(5), { _user_id: 'v4' }), contactSnapshot(p, b, 5, t(5), { _user_id: 'v5' })]);
      await sendAudience([tombstone(p, b, 6, t(6)), contactSnapshot(p, b, 1, t(7), { _user_id: 'reborn' })]);
      await waitFor('rows of a and b', async () => (await current(p, a))?.deleted !== undefined && (await current(p, b))?.str_values.includes('reborn'));
      expect(Number((await current(p, a))!.deleted)).toBe(1);
      const reborn = (await current(p, b))!;
      expect(Number(reborn.deleted)).toBe(0);
      expect(typed(reborn).str).toEqual(['_user_id=reborn']);
    });

    /** The collapsing snapshot (ADR 0223): contacts counted by a plain sum of sign, and their live states (a state whose rows do not cancel). */
    const collapsed = async (project: string) => {
      const [{ contacts }] = await ch.query<{ contacts: string }>(sql`SELECT sum(sign) AS contacts FROM audience_snapshot WHERE project_id = ${project} AND deleted = 0`);
      const [{ exact }] = await ch.query<{ exact: string }>(sql`SELECT count() AS exact FROM audience_contacts FINAL WHERE project_id = ${project} AND deleted = 0`);
      const live = await ch.query<{ audience_id: string; s: string; values: string[]; deleted: number }>(
        sql`SELECT audience_id, version, sum(sign) AS s, any(str_values) AS values, any(deleted) AS deleted FROM audience_snapshot WHERE project_id = ${project} GROUP BY audience_id, version HAVING s != 0 ORDER BY audience_id`,
      );
      return { contacts: Number(contacts), exact: Number(exact), live: live.map((l) => ({ id: l.audience_id, sign: Number(l.s), values: l.values, deleted: Number(l.deleted) })) };
    };

    it('keeps the collapsing snapshot summing to the current contacts: a change cancels the stored state, a deletion stays known, a redelivery writes nothing', async () => {
      const p = randomUUID();
      const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()].sort();
      const t = (s: number) => new Date(Date.UTC(2026, 10, 21, 9, 0, s)).toISOString();
      const first = [contactSnapshot(p, a, 1, t(1), { _user_id: 'a1' }), contactSnapshot(p, b, 1, t(1), { _user_id: 'b1' }), contactSnapshot(p, c, 1, t(1), { _user_id: 'c1' })];
      await sendAudience(first);
      await waitFor('three contacts', async () => (await collapsed(p)).contacts === 3);
      // a changes, b is deleted, then an older snapshot of b arrives late (it must not revive b).
      const second = [contactSnapshot(p, a, 2, t(2), { _user_id: 'a2' }), tombstone(p, b, 2, t(2)), contactSnapshot(p, b, 1, t(1), { _user_id: 'b1' })];
      await sendAudience(second);
      await waitFor('a changed, b deleted', async () => {
        const now = await collapsed(p);
        return now.contacts === 2 && now.live.some((l) => l.id === a && l.values.includes('a2'));
      });
      const settled = await collapsed(p);
      expect(settled.live).toEqual([
        { id: a, sign: 1, values: ['a2'], deleted: 0 },
        { id: b, sign: 1, values: [], deleted: 1 },
        { id: c, sign: 1, values: ['c1'], deleted: 0 },
      ]);
      expect(settled.exact).toBe(2);
      // Kafka redelivers everything: no row is added and the sum stays exact.
      await sendAudience([...first, ...second]);
      const marker = randomUUID();
      await sendAudience([contactSnapshot(p, marker, 1, t(3), { _user_id: 'marker' })]);
      await waitFor('the redelivery consumed', async () => (await collapsed(p)).live.some((l) => l.id === marker));
      const after = await collapsed(p);
      expect(after.contacts).toBe(3);
      expect(after.exact).toBe(3);
      // A second +1 would show as sign 2, a −1 without its state as −1 (merges may drop collapsed pairs meanwhile).
      expect(after.live.filter((l) => l.id !== marker)).toEqual(settled.live);
    });
  });
});
