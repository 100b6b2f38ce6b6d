import { randomUUID } from 'node:crypto';
import { Topics } from '@meld/contracts';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { startIngest } from './app.fixture';
import { type Json, type PrincipalSigner, collectTopic, principalSigner, seedTenancy } from '@meld/fixtures';
import { PROTOTYPE_NAMES, waitFor } from '@meld/testing';

const HOUR = 3600_000;

describe('event writes (ingest)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let tenancy: Awaited<ReturnType<typeof seedTenancy>>;
  let dsToken: PrincipalSigner;
  let events: Awaited<ReturnType<typeof collectTopic>>;
  let triggers: Awaited<ReturnType<typeof collectTopic>>;

  beforeAll(async () => {
    ({ app, base, db } = await startIngest());
    tenancy = await seedTenancy(db);
    await db.query(`INSERT INTO event_types (project_id, uid, name, category, automation) VALUES ($1, 'signup', 'Signup', 'crm', true)`, [tenancy.project.id]);
    dsToken = principalSigner(tenancy, { kind: 'datasource', scopes: ['PROJECT_INGEST_WRITE', 'PROJECT_INGEST_READ'], dataSourceId: tenancy.dataSource.id }, 'ingest');
    [events, triggers] = await Promise.all([
      collectTopic(Topics.events, (v) => v?.projectId === tenancy.project.id),
      collectTopic(Topics.automationTriggers, (v) => v?.projectId === tenancy.project.id),
    ]);
  });
  afterAll(async () => {
    await Promise.all([events?.stop(), triggers?.stop()]);
    await app?.close();
  });

  const stream = () => `${base}/v1/project/${tenancy.project.uid}/datasource/${tenancy.dataSource.id}/stream`;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${stream()}${path}`, { method: 'POST', headers: { ...dsToken('POST', `${stream()}${path}`), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const contact = async (userId: string, attrs: Record<string, unknown> = {}) => expect((await post('/contacts', [{ _user_id: userId, ...attrs }])).status).toBe(202);
  const row = async (userId: string) =>
    (await db.query(`SELECT attributes, version::int AS version FROM source_contacts WHERE project_id = $1 AND data_source_id = $2 AND user_id = $3`, [tenancy.project.id, tenancy.dataSource.id, userId]))[0];
  const uid = () => `u-${randomUUID().slice(0, 8)}`;
  const eid = () => `e-${randomUUID()}`;
  const purchase = (userId: string, eventId = eid(), extra: Record<string, unknown> = {}) => ({
    _user_id: userId,
    _event_id: eventId,
    _event_type: 'purchase',
    _event_parameters: { 'product-id': 'sku-1', amount: 12.5 },
    ...extra,
  });

  it('takes Object.prototype member names as data (ADR 0124): parameters are kept, unknown fields are item errors, never a 500', async () => {
    const id = uid();
    await contact(id);
    const names = PROTOTYPE_NAMES.filter((n) => n !== '__proto__');
    const params = { 'product-id': 'sku-1', amount: 1, ...Object.fromEntries(names.map((n) => [n, n])) };
    const res = await post('/events', [purchase(id, eid(), { _event_parameters: params }), purchase(id, eid(), { constructor: 1, toString: 'x' })]);
    expect(res.status).toBe(202);
    expect(res.body.entity.items[0]).toEqual({ status: 'success', _user_id: id });
    expect(res.body.entity.items[1].errors).toEqual({ constructor: ['unknown event field constructor'], toString: ['unknown event field toString'] });
    const [published] = await events.waitFor(1, (m) => m.value.userId === id && m.value.kind === undefined);
    expect(published.value.parameters).toEqual(params);
  });

  it('refuses a body that is not an array of up to 100 objects with 400; an empty one is accepted with nothing in it', async () => {
    for (const body of [{}, Array.from({ length: 101 }, () => purchase('x')), [1]]) {
      const res = await post('/events', body);
      expect(res.status).toBe(400);
      expect(typeof res.body.message).toBe('string');
    }
    // "up to 100 items" (contacts say "1 to 100"): a client flushing an empty batch is not refused (ADR 0334).
    const empty = await post('/events', []);
    expect([empty.status, empty.body]).toEqual([202, { entity: { successful: 0, failed: 0, items: [] } }]);
  });

  it('produces an accepted event to meld.events.v1 before answering; _event_date defaults to reception time', async () => {
    const user = uid();
    await contact(user);
    const eventId = eid();
    const before = Date.now();
    const res = await post('/events', [purchase(user, eventId)]);
    expect(res).toEqual({ status: 202, body: { entity: { successful: 1, failed: 0, items: [{ status: 'success', _user_id: user }] } } });
    const [m] = await events.waitFor(1, (x) => x.value.eventId === eventId);
    expect(m.key).toBe(`${tenancy.project.id}/${tenancy.dataSource.id}/${user}`);
    expect(m.value).toMatchObject({ userId: user, dataSourceId: tenancy.dataSource.id, eventType: 'purchase', parameters: { 'product-id': 'sku-1', amount: 12.5 } });
    expect(m.value.eventDate).toBe(m.value.receivedAt);
    expect(Date.parse(m.value.receivedAt)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('a resent _event_id is a success that is not produced again (also twice in one batch)', async () => {
    const user = uid();
    await contact(user);
    const eventId = eid();
    expect((await post('/events', [purchase(user, eventId), purchase(user, eventId)])).body.entity).toMatchObject({ successful: 2, failed: 0 });
    expect((await post('/events', [purchase(user, eventId)])).body.entity).toMatchObject({ successful: 1, failed: 0 });
    const marker = eid();
    await post('/events', [purchase(user, marker)]);
    await events.waitFor(1, (x) => x.value.eventId === marker);
    expect(events.messages.filter((x) => x.value.eventId === eventId)).toHaveLength(1);
  });

  it('concurrent writes of one new id (a client retrying before its answer) produce it once', async () => {
    const user = uid();
    await contact(user);
    const eventId = eid();
    const answers = await Promise.all(Array.from({ length: 6 }, () => post('/events', [purchase(user, eventId), purchase(user)])));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(202));
    const marker = eid();
    await post('/events', [purchase(user, marker)]);
    await events.waitFor(1, (x) => x.value.eventId === marker);
    expect(events.messages.filter((x) => x.value.eventId === eventId)).toHaveLength(1);
  });

  it('a batch mixing resent and new ids (written again on the conflict) produces each new one once', async () => {
    const [user, ghost] = [uid(), uid()];
    await contact(user);
    const [old, shared, fresh] = [eid(), eid(), eid()];
    await post('/events', [purchase(user, old)]);
    // `shared` comes first under a contact that does not exist: skipped, so the live user's copy counts.
    const res = await post('/events', [purchase(user, old), purchase(ghost, shared), purchase(user, shared), purchase(user, fresh), purchase(user, fresh)]);
    expect(res.body.entity).toMatchObject({ successful: 5, failed: 0 });
    const marker = eid();
    await post('/events', [purchase(user, marker)]);
    await events.waitFor(1, (x) => x.value.eventId === marker);
    for (const id of [old, shared, fresh]) expect(events.messages.filter((x) => x.value.eventId === id)).toHaveLength(1);
    expect(events.messages.find((x) => x.value.eventId === shared)?.value.userId).toBe(user);
  });

  it('an item that fails its checks leaves no mark, also next to accepted ones (a resend of it counts once)', async () => {
    const user = uid();
    await contact(user);
    const [good, bad, none] = [eid(), eid(), eid()];
    const res = await post('/events', [purchase(user, good), purchase(user, bad, { _event_parameters: { amount: 'ten' } })]);
    expect(res.status).toBe(202);
    expect(res.body.entity.items.map((i: Json) => i.status)).toEqual(['success', 'error']);
    expect((await post('/events', [purchase(user, none, { _event_type: 'refund' })])).status).toBe(422);
    // The marks COMMIT right after the answer: wait for the good one, then none other is there.
    const marked = () => db.query(`SELECT event_id FROM event_ids WHERE project_id = $1 AND event_id = ANY($2)`, [tenancy.project.id, [good, bad, none]]);
    await waitFor('the accepted id marked', async () => ((await marked()).length > 0 ? true : null));
    expect(await marked()).toEqual([{ event_id: good }]);
    expect((await post('/events', [purchase(user, bad), purchase(user, none)])).body.entity).toMatchObject({ successful: 2, failed: 0 });
    await events.waitFor(1, (x) => x.value.eventId === none);
    for (const id of [good, bad, none]) expect(events.messages.filter((x) => x.value.eventId === id)).toHaveLength(1);
  });

  it('refuses U+0000 in _user_id, _event_id and _event_type as item errors (Postgres text cannot hold it)', async () => {
    const user = uid();
    await contact(user);
    const res = await post('/events', [
      purchase('a\u0000b', eid()),
      purchase(user, 'e\u0000x'),
      purchase(user, eid(), { _event_type: 'pur\u0000chase' }),
      purchase(user),
    ]);
    expect(res.status).toBe(202);
    const items = res.body.entity.items as Array<{ status: string; errors?: Record<string, string[]> }>;
    expect(items.map((i) => i.status)).toEqual(['error', 'error', 'error', 'success']);
    expect(items[0].errors).toEqual({ _user_id: ['must not contain the NUL character (U+0000)'] });
    expect(items[1].errors).toEqual({ _event_id: ['must not contain the NUL character (U+0000)'] });
    expect(Object.keys(items[2].errors ?? {})).toEqual(['_event_type']);
  });

  it('refuses a _user_id of . or .. as the item\'s error, with or without _user_data (its contact could not be deleted by its path)', async () => {
    const res = await post('/events', [purchase('.'), purchase('..', eid(), { _user_data: { _first_name: 'Dot' } })]);
    expect(res.status).toBe(422);
    const items = res.body.entity.items as Array<{ status: string; errors?: Record<string, string[]> }>;
    expect(items.map((i) => Object.keys(i.errors ?? {}))).toEqual([['_user_id'], ['_user_id']]);
    expect(items[0].errors?._user_id).toEqual([expect.stringMatching(/must not be "\." or "\.\."/)]);
    expect(await row('..')).toBeUndefined();
  });

  it('an unknown data source is 404, whatever the body', async () => {
    const other = `${base}/v1/project/${tenancy.project.uid}/datasource/${randomUUID()}/stream/events`;
    for (const body of [[purchase('x')], { not: 'an array' }]) {
      const res = await fetch(other, { method: 'POST', headers: { ...dsToken('POST', other), 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status).toBe(404);
    }
  });

  it('event type names travel to Postgres as escaped literals: quotes and backslashes are just unknown types', async () => {
    const user = uid();
    await contact(user);
    const odd = ["o'brien", "x\\' OR '1'='1", "a\\", '$1', "'; DROP TABLE event_ids; --"];
    const res = await post('/events', [...odd.map((t) => purchase(user, eid(), { _event_type: t })), purchase(user)]);
    expect(res.status).toBe(202);
    const items = (res.body.entity as { items: Array<{ status: string; errors?: Record<string, string[]> }> }).items;
    expect(items.map((i) => i.status)).toEqual([...odd.map(() => 'error'), 'success']);
    for (const item of items.slice(0, odd.length)) expect(Object.keys(item.errors ?? {})).toEqual(['_event_type']);
    expect(await db.query(`SELECT count(*)::int AS n FROM event_ids WHERE project_id = $1`, [tenancy.project.id])).toEqual([{ n: expect.any(Number) }]);
  });

  it('an event-only item for an unknown (or deleted) contact is skipped silently', async () => {
    const ghost = uid();
    const eventId = eid();
    expect((await post('/events', [purchase(ghost, eventId)])).body.entity).toEqual({ successful: 1, failed: 0, items: [{ status: 'success', _user_id: ghost }] });
    expect(await db.query(`SELECT 1 FROM event_ids WHERE project_id = $1 AND event_id = $2`, [tenancy.project.id, eventId])).toEqual([]);
    // once the contact exists, the same id goes through (it was never marked)
    await contact(ghost);
    await post('/events', [purchase(ghost, eventId)]);
    await events.waitFor(1, (x) => x.value.eventId === eventId);
  });

  it('_user_data creates or updates the contact before the event; its failure fails the event only', async () => {
    const user = uid();
    const ok = eid();
    const bad = eid();
    const res = await post('/events', [
      purchase(user, ok, { _user_data: { _first_name: 'Eve', _email: 'eve@example.com' } }),
      purchase(uid(), bad, { _user_data: { _email: 'nope' } }),
    ]);
    expect(res.status).toBe(202);
    expect(res.body.entity.items[1]).toMatchObject({ status: 'error', errors: { '_user_data._email': ['must be an email address'] } });
    expect(await row(user)).toMatchObject({ attributes: { _first_name: 'Eve', _email: 'eve@example.com' }, version: 1 });
    const [m] = await events.waitFor(1, (x) => x.value.eventId === ok);
    expect(m.value.userData).toEqual({ _first_name: 'Eve', _email: 'eve@example.com' });
    expect(await db.query(`SELECT 1 FROM event_ids WHERE project_id = $1 AND event_id = $2`, [tenancy.project.id, bad])).toEqual([]);
  });

  it('an older event does not overwrite newer _user_data values; a newer one does', async () => {
    const user = uid();
    await contact(user, { _first_name: 'Now' });
    const old = new Date(Date.now() - 24 * HOUR).toISOString();
    await post('/events', [purchase(user, eid(), { _event_date: old, _user_data: { _first_name: 'Old', _last_name: 'Kept' } })]);
    expect((await row(user)).attributes).toEqual({ _first_name: 'Now', _last_name: 'Kept' });
    const later = new Date(Date.now() + 60_000).toISOString();
    await post('/events', [purchase(user, eid(), { _event_date: later, _user_data: { _first_name: 'Later' } })]);
    expect((await row(user)).attributes).toEqual({ _first_name: 'Later', _last_name: 'Kept' });
  });

  it('20 concurrent batches with _user_data on one instance (a pool of 10) are all written: a write never holds a pooled connection while it waits for another', async () => {
    const users = Array.from({ length: 20 }, uid);
    const ids = users.map(() => eid());
    const started = Date.now();
    const answers = await Promise.all(users.map((u, i) => post('/events', [purchase(u, ids[i], { _user_data: { _first_name: `P${i}` } })])));
    expect(answers.map((a) => [a.status, a.body.entity?.successful])).toEqual(users.map(() => [202, 1]));
    // Well inside the pool's 5 s acquire timeout: nobody waited for a connection that a waiter held.
    expect(Date.now() - started).toBeLessThan(5000);
    const produced = await events.waitFor(users.length, (m) => ids.includes(m.value.eventId));
    expect(new Set(produced.map((m) => m.value.eventId)).size).toBe(users.length);
    for (const [i, u] of users.entries()) expect((await row(u)).attributes._first_name).toBe(`P${i}`);
  });

  it('a future-dated event\'s _user_data does not hold off later contact writes (stamped at reception)', async () => {
    const user = uid();
    const tomorrow = new Date(Date.now() + 24 * HOUR).toISOString();
    expect((await post('/events', [purchase(user, eid(), { _event_date: tomorrow, _user_data: { _first_name: 'Future', _last_name: 'Doe' } })])).status).toBe(202);
    expect((await row(user)).attributes).toEqual({ _first_name: 'Future', _last_name: 'Doe' });
    await contact(user, { _first_name: 'Fixed', _last_name: null });
    expect((await row(user)).attributes).toEqual({ _first_name: 'Fixed' });
  });

  it('checks required fields, the event type, parameters and the date; 422 when every item fails', async () => {
    const user = uid();
    await contact(user);
    const res = await post('/events', [
      { _event_id: eid(), _event_type: 'purchase', _event_parameters: { 'product-id': 'x' } },
      { _user_id: user, _event_type: 'purchase', _event_parameters: { 'product-id': 'x' } },
      { _user_id: user, _event_id: eid(), _event_type: 'refund' },
      { _user_id: user, _event_id: eid(), _event_type: 'purchase', _event_parameters: { amount: 'ten' } },
      { _user_id: user, _event_id: eid(), _event_type: 'purchase', _event_parameters: { 'product-id': 'x' }, _event_date: 'yesterday' },
      { _user_id: user, _event_id: eid(), _event_type: 'purchase', _event_parameters: [] },
      { _user_id: user, _event_id: eid(), _event_type: 'purchase', _event_parameters: { 'product-id': 'x' }, extra: 1 },
    ]);
    expect(res.status).toBe(422);
    const errors = res.body.entity.items.map((i: Json) => Object.keys(i.errors).sort());
    expect(errors).toEqual([
      ['_user_id'],
      ['_event_id'],
      ['_event_type'],
      ['_event_parameters.amount', '_event_parameters.product-id'],
      ['_event_date'],
      ['_event_parameters'],
      ['extra'],
    ]);
    expect(res.body.entity.items[2].errors._event_type).toEqual(['unknown event type refund']);
  });

  it('a declared string parameter is bounded by its maxLength, which the catalogue allows past 2,048 characters', async () => {
    const user = uid();
    await contact(user);
    const [{ id }] = await db.query(`INSERT INTO event_types (project_id, uid, name, category) VALUES ($1, 'review', 'Review', 'crm') RETURNING id`, [tenancy.project.id]);
    await db.query(`INSERT INTO event_parameters (event_type_id, parameter, title, data_type, max_length) VALUES ($1, 'text', 'Text', 'string', 5000), ($1, 'note', 'Note', 'string', NULL)`, [id]);
    const review = (parameters: Record<string, unknown>) => ({ _user_id: user, _event_id: eid(), _event_type: 'review', _event_parameters: parameters });
    const res = await post('/events', [review({ text: 'x'.repeat(4000) }), review({ text: 'x'.repeat(5001) }), review({ note: 'x'.repeat(4000) })]);
    expect(res.body.entity.items.map((i: Json) => i.errors)).toEqual([undefined, { '_event_parameters.text': ['must be at most 5000 characters'] }, undefined]);
  });

  it('a required list parameter sent empty is missing: "is required", as when left out or null', async () => {
    const user = uid();
    await contact(user);
    const [{ id }] = await db.query(`INSERT INTO event_types (project_id, uid, name, category) VALUES ($1, 'basket', 'Basket', 'ecommerce') RETURNING id`, [tenancy.project.id]);
    await db.query(`INSERT INTO event_parameters (event_type_id, parameter, title, data_type, required, multi_value) VALUES ($1, 'skus', 'SKUs', 'string', true, 10)`, [id]);
    const basket = (parameters: Record<string, unknown>) => ({ _user_id: user, _event_id: eid(), _event_type: 'basket', _event_parameters: parameters });
    const res = await post('/events', [basket({ skus: [] }), basket({}), basket({ skus: null }), basket({ skus: ['a'] }), basket({ skus: 'a' })]);
    expect(res.status).toBe(202);
    expect(res.body.entity.items.map((i: Json) => i.errors)).toEqual([...Array(3).fill({ '_event_parameters.skus': ['is required'] }), undefined, undefined]);
  });

  it('a declared email parameter is published trimmed and in Unicode NFC, as a contact email is stored (ADR 0036)', async () => {
    const user = uid();
    await contact(user);
    const [{ id }] = await db.query(`INSERT INTO event_types (project_id, uid, name, category) VALUES ($1, 'invite', 'Invite', 'crm') RETURNING id`, [tenancy.project.id]);
    await db.query(`INSERT INTO event_parameters (event_type_id, parameter, title, data_type, multi_value) VALUES ($1, 'guest', 'Guest', 'email', 1), ($1, 'cc', 'Cc', 'email', 30), ($1, 'note', 'Note', 'string', 1)`, [id]);
    const eventId = eid();
    // José with a decomposed accent (e + U+0301), as macOS input and some forms send it.
    const decomposed = 'Jose\u0301@example.com';
    const res = await post('/events', [
      { _user_id: user, _event_id: eventId, _event_type: 'invite', _event_parameters: { guest: ` ${decomposed}\t`, cc: [' ada@example.com', 'bob@example.com '], note: ' kept as sent ' } },
    ]);
    expect(res.body.entity).toMatchObject({ successful: 1, failed: 0 });
    const [m] = await events.waitFor(1, (x) => x.value.eventId === eventId);
    expect(m.value.parameters).toEqual({ guest: 'Jos\u00e9@example.com', cc: ['ada@example.com', 'bob@example.com'], note: ' kept as sent ' });
    // U+0958 is 3 bytes, 6 in NFC (U+0915 U+093C): within 16 KiB as sent, past it as published, so refused.
    const long = Array.from({ length: 22 }, () => `${'\u0958'.repeat(240)}@example.com`);
    const grown = await post('/events', [{ _user_id: user, _event_id: eid(), _event_type: 'invite', _event_parameters: { cc: long } }]);
    expect(grown.status).toBe(422);
    expect(grown.body.entity.items[0].errors._event_parameters).toEqual([expect.stringMatching(/^must be at most 16384 bytes as JSON/)]);
  });

  it('flags automation: only events of automation types within ±1 h of reception; ingest publishes no trigger itself', async () => {
    const user = uid();
    await contact(user);
    const now = Date.now();
    const at = (offset: number) => new Date(now + offset).toISOString();
    const ids = { inside: eid(), defaulted: eid(), pastEdge: eid(), past: eid(), future: eid(), notAutomation: eid() };
    const signup = (eventId: string, date?: string) => ({ _user_id: user, _event_id: eventId, _event_type: 'signup', ...(date ? { _event_date: date } : {}) });
    const res = await post('/events', [
      signup(ids.inside, at(-30 * 60_000)),
      signup(ids.defaulted),
      signup(ids.pastEdge, at(-HOUR + 60_000)),
      signup(ids.past, at(-2 * HOUR)),
      signup(ids.future, at(2 * HOUR)),
      purchase(user, ids.notAutomation),
    ]);
    expect(res.body.entity).toMatchObject({ successful: 6, failed: 0 });
    const produced = await events.waitFor(6, (x) => Object.values(ids).includes(x.value.eventId));
    const flagged = produced.filter((x) => x.value.automation === true).map((x) => x.value.eventId);
    expect(flagged.sort()).toEqual([ids.inside, ids.defaulted, ids.pastEdge].sort());
    expect(produced.filter((x) => x.value.automation !== true).every((x) => !('automation' in x.value))).toBe(true);
    // Triggers carry the audience contact, which only identity-merge knows (its own test).
    await new Promise((r) => setTimeout(r, 300));
    expect(triggers.messages.filter((x) => Object.values(ids).includes(x.value.eventId))).toEqual([]);
  });

  it('an event write racing a delete of its contact is on the topic before the erase marker, or skipped', async () => {
    const users = Array.from({ length: 8 }, uid);
    for (const u of users) await contact(u);
    const written = new Map<string, string>();
    await Promise.all(
      users.flatMap((u) => {
        const eventId = eid();
        written.set(u, eventId);
        const del = fetch(`${stream()}/contacts/${u}`, { method: 'DELETE', headers: dsToken('DELETE', `${stream()}/contacts/${u}`) }).then((r) => expect(r.status).toBe(202));
        return [post('/events', [purchase(u, eventId)]).then((r) => expect(r.status).toBe(202)), del];
      }),
    );
    const erased = await events.waitFor(users.length, (x) => x.value.kind === 'erase' && users.includes(x.value.userId));
    for (const u of users) {
      const stream = events.messages.filter((x) => x.value.userId === u);
      const eraseAt = stream.findIndex((x) => x.value.kind === 'erase');
      const eventAt = stream.findIndex((x) => x.value.eventId === written.get(u));
      expect(eraseAt).toBeGreaterThanOrEqual(0);
      if (eventAt >= 0) expect(eventAt).toBeLessThan(eraseAt);
      else expect(await db.query(`SELECT 1 FROM event_ids WHERE project_id = $1 AND event_id = $2`, [tenancy.project.id, written.get(u)])).toEqual([]);
    }
    expect(erased[0].key).toBe(`${tenancy.project.id}/${tenancy.dataSource.id}/${erased[0].value.userId}`);
  });

  it('an event of a contact re-created after its delete follows the erase marker, even while the outbox relay is held up', async () => {
    const user = uid();
    await contact(user);
    const eventId = eid();
    // Every outbox relay on this database held off, as a busy or backing-off one is: what waits in the outbox stays there.
    const holder = db.createQueryRunner();
    await holder.connect();
    await holder.query(`SELECT pg_advisory_lock(hashtext('meld.outbox.pump'))`);
    try {
      const target = `${stream()}/contacts/${user}`;
      expect((await fetch(target, { method: 'DELETE', headers: dsToken('DELETE', target) })).status).toBe(202);
      await contact(user);
      expect((await post('/events', [purchase(user, eventId)])).status).toBe(202);
    } finally {
      await holder.query(`SELECT pg_advisory_unlock(hashtext('meld.outbox.pump'))`);
      await holder.release();
    }
    // The events sink erases every event of the contact it holds when it reaches the marker: the new event must come after it.
    const produced = await events.waitFor(2, (x) => x.value.userId === user);
    expect(produced.map((x) => x.value.kind ?? x.value.eventId)).toEqual(['erase', eventId]);
  });

  it('an event of the contact still waiting in the outbox when it is deleted (the messaging app queues its own there) precedes the erase marker', async () => {
    const user = uid();
    await contact(user);
    const queued = eid();
    const key = `${tenancy.project.id}/${tenancy.dataSource.id}/${user}`;
    const at = new Date().toISOString();
    const value = { schemaVersion: 1, projectId: tenancy.project.id, dataSourceId: tenancy.dataSource.id, userId: user, eventId: queued, eventType: 'purchase', eventDate: at, receivedAt: at, parameters: {} };
    const holder = db.createQueryRunner();
    await holder.connect();
    await holder.query(`SELECT pg_advisory_lock(hashtext('meld.outbox.pump'))`);
    try {
      await db.query(`INSERT INTO outbox (topic, key, value) VALUES ($1, $2, $3)`, [Topics.events, key, JSON.stringify(value)]);
      const target = `${stream()}/contacts/${user}`;
      expect((await fetch(target, { method: 'DELETE', headers: dsToken('DELETE', target) })).status).toBe(202);
    } finally {
      await holder.query(`SELECT pg_advisory_unlock(hashtext('meld.outbox.pump'))`);
      await holder.release();
    }
    const produced = await events.waitFor(2, (x) => x.value.userId === user);
    expect(produced.map((x) => x.value.kind ?? x.value.eventId)).toEqual([queued, 'erase']);
    await waitFor('the queued event gone from the outbox', async () => (await db.query(`SELECT 1 FROM outbox WHERE key = $1 AND topic = $2`, [key, Topics.events])).length === 0);
    await new Promise((r) => setTimeout(r, 300));
    expect(events.messages.filter((x) => x.value.eventId === queued)).toHaveLength(1);
  });
});
