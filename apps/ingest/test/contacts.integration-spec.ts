import { randomUUID } from 'node:crypto';
import { Topics } from '@meld/contracts';
import { waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { startIngest } from './app.fixture';
import { type Json, type PrincipalSigner, collectTopic, principalSigner, seedTenancy } from '@meld/fixtures';
import { PROTOTYPE_NAMES } from '@meld/testing';

describe('contact writes (ingest)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let tenancy: Awaited<ReturnType<typeof seedTenancy>>;
  let dsToken: PrincipalSigner;
  let contacts: Awaited<ReturnType<typeof collectTopic>>;
  let events: Awaited<ReturnType<typeof collectTopic>>;

  beforeAll(async () => {
    ({ app, base, db } = await startIngest());
    tenancy = await seedTenancy(db);
    dsToken = principalSigner(tenancy, { kind: 'datasource', scopes: ['PROJECT_INGEST_WRITE', 'PROJECT_INGEST_READ'], dataSourceId: tenancy.dataSource.id }, 'ingest');
    [contacts, events] = await Promise.all([
      collectTopic(Topics.contacts, (v) => v?.projectId === tenancy.project.id),
      collectTopic(Topics.events, (v) => v?.projectId === tenancy.project.id),
    ]);
  });
  afterAll(async () => {
    await Promise.all([contacts?.stop(), events?.stop()]);
    await app?.close();
  });

  const url = (suffix = '') => `${base}/v1/project/${tenancy.project.uid}/datasource/${tenancy.dataSource.id}/stream/contacts${suffix}`;
  const post = async (body: unknown, raw = false) => {
    const res = await fetch(url(), { method: 'POST', headers: { ...dsToken('POST', url()), 'content-type': 'application/json' }, body: raw ? (body as string) : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const del = async (userId: string) => {
    const target = url(`/${encodeURIComponent(userId)}`);
    const res = await fetch(target, { method: 'DELETE', headers: dsToken('DELETE', target) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const row = async (userId: string) =>
    (await db.query(`SELECT attributes, version::int AS version, deleted_at FROM source_contacts WHERE project_id = $1 AND data_source_id = $2 AND user_id = $3`, [tenancy.project.id, tenancy.dataSource.id, userId]))[0];
  const uid = () => `u-${randomUUID().slice(0, 8)}`;

  it('refuses a body that is not an array of 1 to 100 objects with 400 and a message', async () => {
    for (const body of [{ _user_id: 'x' }, [], Array.from({ length: 101 }, (_, i) => ({ _user_id: `u${i}` })), ['x'], [null], 'text']) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(typeof res.body.message).toBe('string');
    }
    expect((await post('[{', true)).status).toBe(400);
    // A body without Content-Type, or with one no parser takes: a malformed body too (400), not Fastify's 415.
    for (const type of [undefined, 'application/vnd.api+json', 'text/plain']) {
      const res = await fetch(url(), { method: 'POST', headers: { ...dsToken('POST', url()), ...(type ? { 'content-type': type } : {}) }, body: new Blob(['[{"_user_id":"x"}]']) });
      expect([type, res.status, ((await res.json()) as Json).message]).toEqual([type, 400, expect.stringMatching(/JSON/)]);
    }
  });

  it('accepts 100 items', async () => {
    const res = await post(Array.from({ length: 100 }, () => ({ _user_id: uid() })));
    expect(res.status).toBe(202);
    expect(res.body.entity.successful).toBe(100);
  });

  it('creates a contact, patches it (omitted keeps, null clears) and publishes each version with the whole state', async () => {
    const id = uid();
    const first = await post([{ _user_id: id, _first_name: 'Ada', _email: 'ada@example.com', loyalty_tier: 'gold' }]);
    expect(first).toEqual({ status: 202, body: { entity: { successful: 1, failed: 0, items: [{ status: 'success', _user_id: id }] } } });
    expect(await post([{ _user_id: id, _last_name: 'Lovelace', loyalty_tier: null }])).toMatchObject({ status: 202 });
    expect(await row(id)).toMatchObject({ attributes: { _first_name: 'Ada', _last_name: 'Lovelace', _email: 'ada@example.com' }, version: 2, deleted_at: null });
    const published = await contacts.waitFor(2, (m) => m.value.userId === id);
    expect(published.map((m) => m.key)).toEqual([`${tenancy.project.id}/${tenancy.dataSource.id}/${id}`, `${tenancy.project.id}/${tenancy.dataSource.id}/${id}`]);
    expect(published.map((m) => [m.value.kind, m.value.version])).toEqual([['upsert', 1], ['upsert', 2]]);
    expect(published[1].value.patch).toEqual({ _first_name: 'Ada', _last_name: 'Lovelace', _email: 'ada@example.com', loyalty_tier: null });
    expect(published[1].value.dataSourceId).toBe(tenancy.dataSource.id);
  });

  it('a _user_id of 180 characters (the limit) is written and deleted by its path (Fastify matches no longer parameter than 100 by default)', async () => {
    const id = `u-${'x'.repeat(178)}`;
    expect(await post([{ _user_id: id, _email: 'long@example.com' }])).toMatchObject({ status: 202, body: { entity: { successful: 1 } } });
    expect(await del(id)).toEqual({ status: 202, body: { entity: { _user_id: id, deleted: true } } });
    expect(await row(id)).toMatchObject({ attributes: {}, deleted_at: expect.any(Date) });
  });

  it('refuses a _user_id of . or .. per item: HTTP clients drop such a path segment, so the contact could never be deleted or read by its path', async () => {
    const dots = `...${uid()}`;
    const res = await post([{ _user_id: '.' }, { _user_id: '..' }, { _user_id: dots }]);
    expect(res.status).toBe(202);
    const items = res.body.entity.items as Array<{ status: string; _user_id: string; errors?: Record<string, string[]> }>;
    expect(items.map((i) => [i.status, i._user_id])).toEqual([['error', '.'], ['error', '..'], ['success', dots]]);
    expect(items[0].errors).toEqual({ _user_id: [expect.stringMatching(/must not be "\." or "\.\."/)] });
    expect(items[1].errors).toEqual(items[0].errors);
    expect(await row('.')).toBeUndefined();
    expect(await row('..')).toBeUndefined();
  });

  it('a data source id written in upper case in the path: the messages carry the id as stored, so identity-merge finds its state', async () => {
    const id = uid();
    const upper = url().replace(tenancy.dataSource.id, tenancy.dataSource.id.toUpperCase());
    const res = await fetch(upper, { method: 'POST', headers: { ...dsToken('POST', upper), 'content-type': 'application/json' }, body: JSON.stringify([{ _user_id: id, _first_name: 'Ada' }]) });
    expect(res.status).toBe(202);
    const [published] = await contacts.waitFor(1, (m) => m.value.userId === id);
    expect([published.key, published.value.dataSourceId]).toEqual([`${tenancy.project.id}/${tenancy.dataSource.id}/${id}`, tenancy.dataSource.id]);
  });

  it('an unchanged rewrite bumps no version and publishes nothing', async () => {
    const id = uid();
    await post([{ _user_id: id, _first_name: 'Bo' }]);
    await post([{ _user_id: id, _first_name: 'Bo' }]);
    expect((await row(id)).version).toBe(1);
  });

  it('reports item errors without blocking the other items; 422 when every item fails', async () => {
    const ok = uid();
    const partial = await post([
      { _user_id: ok, _email: 'ok@example.com' },
      { _first_name: 'No id' },
      { _user_id: '' },
      { _user_id: 'bad-values', _email: 'not-an-email', _phone_mobile: 'call me', _birthday: '2020-02-30', _frist_name: 'typo', _datasources: ['x'] },
    ]);
    expect(partial.status).toBe(202);
    expect(partial.body.entity).toMatchObject({ successful: 1, failed: 3 });
    const [a, b, c, d] = partial.body.entity.items;
    expect(a).toEqual({ status: 'success', _user_id: ok });
    expect(b).toEqual({ status: 'error', _user_id: null, errors: { _user_id: ['is required'] } });
    expect(c.errors._user_id).toEqual(['must be a non-empty string']);
    expect(Object.keys(d.errors).sort()).toEqual(['_birthday', '_datasources', '_email', '_frist_name', '_phone_mobile']);
    expect(d.errors._frist_name[0]).toContain('_frist_name');
    expect(await row('bad-values')).toBeUndefined();

    const all = await post([{ _user_id: uid(), _email: 'x' }, { nope: 1 }]);
    expect(all.status).toBe(422);
    expect(all.body.entity).toMatchObject({ successful: 0, failed: 2 });
  });

  it('refuses U+0000 in _user_id and in attribute values as item errors, not as a failed batch', async () => {
    const ok = uid();
    const res = await post([{ _user_id: 'a\u0000b' }, { _user_id: uid(), _first_name: 'Ev\u0000e' }, { _user_id: uid(), nul_attr: 'x\u0000' }, { _user_id: ok }]);
    expect(res.status).toBe(202);
    const items = res.body.entity.items as Array<{ status: string; errors?: Record<string, string[]> }>;
    expect(items.map((i) => i.status)).toEqual(['error', 'error', 'error', 'success']);
    expect(items[0].errors).toEqual({ _user_id: ['must not contain the NUL character (U+0000)'] });
    expect(Object.keys(items[1].errors ?? {})).toEqual(['_first_name']);
    expect(Object.keys(items[2].errors ?? {})).toEqual(['nul_attr']);
    expect(await row(ok)).toMatchObject({ version: 1 });
    expect(await del('a\u0000b')).toEqual({ status: 404, body: expect.objectContaining({ message: expect.any(String) }) });
  });

  it('refuses a lone UTF-16 surrogate as the item\'s error (Postgres cannot store it), and stores a paired one', async () => {
    const [paired, lone] = [uid(), uid()];
    const res = await post([{ _user_id: 'a\ud800' }, { _user_id: lone, _first_name: 'Ev\udc00e' }, { _user_id: paired, _first_name: 'Eve 🚀' }]);
    expect(res.status).toBe(202);
    const items = res.body.entity.items as Array<{ status: string; errors?: Record<string, string[]> }>;
    expect(items.map((i) => i.status)).toEqual(['error', 'error', 'success']);
    expect(items[0].errors).toEqual({ _user_id: ['must be valid Unicode text (a lone UTF-16 surrogate cannot be stored)'] });
    expect(Object.keys(items[1].errors ?? {})).toEqual(['_first_name']);
    expect(await row(lone)).toBeUndefined();
    expect((await row(paired)).attributes).toMatchObject({ _first_name: 'Eve 🚀' });
  });

  it('accepts attributes named like Object.prototype members (ADR 0124): stored as given, never a 500', async () => {
    const id = uid();
    const names = PROTOTYPE_NAMES.filter((n) => !n.startsWith('_'));
    const res = await post([{ _user_id: id, ...Object.fromEntries(names.map((n) => [n, `v-${n}`])) }]);
    expect(res).toEqual({ status: 202, body: { entity: { successful: 1, failed: 0, items: [{ status: 'success', _user_id: id }] } } });
    expect((await row(id)).attributes).toEqual(Object.fromEntries(names.map((n) => [n, `v-${n}`])));
    // a second write reads those names back from the stored state (the patch merge)
    expect((await post([{ _user_id: id, constructor: null, toString: 'again' }])).status).toBe(202);
    expect((await row(id)).attributes).toMatchObject({ toString: 'again', valueOf: 'v-valueOf' });
    // a `__proto__` key (however escaped) is refused by the JSON body parser with a 400 naming it
    for (const key of ['__proto__', '\\u005f_proto__']) {
      const proto = await post(`[{"_user_id":"x"},{"_user_id":"${uid()}","${key}":"x"}]`, true);
      expect(proto).toEqual({ status: 400, body: expect.objectContaining({ message: '$[1].__proto__: the key __proto__ is not allowed' }) });
    }
    const reserved = await post([{ _user_id: uid(), _constructor: 1 }]);
    expect(Object.keys(reserved.body.entity.items[0].errors)).toEqual(['_constructor']);
    // invalid values of such names are item errors too
    const bad = await post([{ _user_id: uid(), hasOwnProperty: { nested: 1 } }]);
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.entity.items[0].errors)).toEqual(['hasOwnProperty']);
  });

  it('types a new custom attribute from its first value; later values must match', async () => {
    const name = `plan_${randomUUID().slice(0, 6)}`;
    const res = await post([{ _user_id: uid(), [name]: 3 }, { _user_id: uid(), [name]: 'three' }, { _user_id: uid(), [name]: 4.5, flags_x: { nested: true } }]);
    expect(res.body.entity.items.map((i: Json) => i.status)).toEqual(['success', 'error', 'error']);
    expect(res.body.entity.items[1].errors[name]).toEqual(['must be a number']);
    expect(res.body.entity.items[2].errors.flags_x).toBeDefined();
    const [attr] = await db.query(`SELECT type, multivalue, reserved FROM attributes WHERE project_id = $1 AND uid = $2`, [tenancy.project.id, name]);
    expect(attr).toEqual({ type: 'number', multivalue: false, reserved: false });
    expect((await post([{ _user_id: uid(), [name]: true }])).status).toBe(422);
    // catalogue types: the seeded string attribute refuses a number
    expect((await post([{ _user_id: uid(), loyalty_tier: 5 }])).body.entity.items[0].errors.loyalty_tier).toEqual(['must be a string']);
    // an internal, disabled attribute cannot be written
    expect((await post([{ _user_id: uid(), legacy_score: 5 }])).status).toBe(422);
  });

  it('an item refused for its _user_id creates no attribute, so a corrected retry types it afresh', async () => {
    const name = `tier_${randomUUID().slice(0, 6)}`;
    const refused = await post([{ _user_id: 42, [name]: 5 }, { _user_id: uid() }]);
    expect(refused.body.entity.items.map((i: Json) => i.status)).toEqual(['error', 'success']);
    expect(Object.keys(refused.body.entity.items[0].errors)).toEqual(['_user_id']);
    expect(await db.query(`SELECT 1 FROM attributes WHERE project_id = $1 AND uid = $2`, [tenancy.project.id, name])).toEqual([]);
    const retried = await post([{ _user_id: uid(), [name]: 'gold' }]);
    expect(retried.body.entity.items.map((i: Json) => i.status)).toEqual(['success']);
  });

  it('a failing batch leaves no new attribute behind', async () => {
    const name = `ghost_${randomUUID().slice(0, 6)}`;
    expect((await post([{ _user_id: uid(), [name]: 'x', _email: 'bad' }])).status).toBe(422);
    expect(await db.query(`SELECT 1 FROM attributes WHERE project_id = $1 AND uid = $2`, [tenancy.project.id, name])).toEqual([]);
  });

  it('DELETE clears the personal data, keeps the key row, publishes a delete and an erase marker; unknown → 404; a later upsert recreates', async () => {
    const id = uid();
    await post([{ _user_id: id, _email: 'gone@example.com' }]);
    expect(await del(id)).toEqual({ status: 202, body: { entity: { _user_id: id, deleted: true } } });
    expect(await row(id)).toMatchObject({ attributes: {}, version: 2, deleted_at: expect.any(Date) });
    expect((await db.query(`SELECT attribute_at FROM source_contacts WHERE project_id = $1 AND user_id = $2`, [tenancy.project.id, id]))[0].attribute_at).toEqual({});
    const published = await contacts.waitFor(2, (m) => m.value.userId === id);
    expect(published[1].value).toMatchObject({ kind: 'delete', version: 2 });
    const [erase] = await events.waitFor(1, (m) => m.value.userId === id);
    expect(erase).toEqual({ key: `${tenancy.project.id}/${tenancy.dataSource.id}/${id}`, value: expect.objectContaining({ kind: 'erase', version: 2, dataSourceId: tenancy.dataSource.id }) });
    // Published means gone from Postgres: no outbox row of the contact keeps its data.
    await waitFor('the outbox drained', async () => (await db.query(`SELECT 1 FROM outbox WHERE key = $1`, [erase.key])).length === 0);
    expect((await del(id)).status).toBe(404);
    expect((await del('never-seen')).status).toBe(404);
    await post([{ _user_id: id, _first_name: 'Back' }]);
    expect(await row(id)).toMatchObject({ attributes: { _first_name: 'Back' }, version: 3, deleted_at: null });
  });

  it('two concurrent batches creating the same contact end with both patches and distinct versions', async () => {
    const id = uid();
    const [a, b] = await Promise.all([post([{ _user_id: id, _first_name: 'A' }]), post([{ _user_id: id, _last_name: 'B' }])]);
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(await row(id)).toMatchObject({ attributes: { _first_name: 'A', _last_name: 'B' }, version: 2 });
  });

  it('drains the outbox after publishing', async () => {
    const id = uid();
    await post([{ _user_id: id }]);
    await contacts.waitFor(1, (m) => m.value.userId === id);
    // The pump deletes its rows in the transaction it commits after the broker's ack, so a
    // consumer can see the message a moment before the row is gone; a row left behind fails here.
    const key = `${tenancy.project.id}/${tenancy.dataSource.id}/${id}`;
    await waitFor('the outbox row deleted', async () => (await db.query(`SELECT 1 FROM outbox WHERE key = $1`, [key])).length === 0, { timeoutMs: 5000, intervalMs: 20 });
  });

  it('the relay publishes the versions of one contact in order', async () => {
    const id = uid();
    for (let i = 1; i <= 15; i++) expect((await post([{ _user_id: id, _first_name: `v${i}` }])).status).toBe(202);
    const published = await contacts.waitFor(15, (m) => m.value.userId === id);
    expect(published.map((m) => m.value.version)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    expect(published.map((m) => m.value.patch._first_name)).toEqual(Array.from({ length: 15 }, (_, i) => `v${i + 1}`));
  });

  it('exposes the outbox depth and lag on /metrics', async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toMatch(/^meld_outbox_depth(\{[^}]*\})? \d+/m);
    expect(text).toMatch(/^meld_outbox_lag_seconds(\{[^}]*\})? [\d.e+-]+/m);
  });
});
