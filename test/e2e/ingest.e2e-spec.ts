import { randomBytes, randomUUID } from 'node:crypto';
import { deflateSync, gzipSync } from 'node:zlib';
import { INGEST_BODY_LIMIT, Topics } from '@meld/contracts';
import { principalHeader } from '@meld/fixtures';
import { waitFor } from '@meld/testing';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { Client } from 'pg';
import { SHARED_BASE, SHARED_GATEWAY_PORT, type SharedSystem, sharedSystem } from './support/shared-system';
import { tablesHolding as tablesHoldingIn } from './support/tables-holding';

// The ingest writes through the gateway with a real data-source token: the eight apps as
// processes (the shared e2e system, ADR 0352), tenants made through the operator API.
const BASE = SHARED_BASE;
// The audience app of the system (gateway port + 3): the test calls the events read
// (routes.ts AUDIENCE_EVENTS_ROUTE) there directly, with a signed principal.
const AUDIENCE = `http://127.0.0.1:${SHARED_GATEWAY_PORT + 3}`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

async function admin(method: string, path: string, body?: unknown): Promise<Json> {
  const res = await fetch(`${BASE}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${process.env.MELD_ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} /admin/v1${path} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

describe('ingest writes through the gateway', () => {
  let stream: string;
  let token: string;
  let dataSource: string;
  // The system's own broker and database: the test reads both.
  let system: SharedSystem;

  beforeAll(async () => {
    if (!process.env.MELD_ADMIN_TOKEN) throw new Error('MELD_ADMIN_TOKEN is not set (npm test sets it)');
    system = await sharedSystem();
    const org = (await admin('POST', '/organizations', { name: `ingest-${randomUUID().slice(0, 8)}`, plan: 'm' })).entity.id;
    const project = (await admin('POST', `/organizations/${org}/projects`, { name: 'Ingest e2e' })).entity.uid;
    await admin('POST', `/projects/${project}/event-types`, { uid: 'order_completed', name: 'Order completed', category: 'ecommerce' });
    const ds = await admin('POST', `/projects/${project}/datasources`, { name: 'Web' });
    stream = `${BASE}/v1/project/${project}/datasource/${ds.entity.id}/stream`;
    token = ds.metadata.token;
    dataSource = ds.entity.id;
  }, 180000);

  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${stream}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
  };

  it('accepts a contact and its event with 202, rate-limit headers included', async () => {
    const contact = await post('/contacts', [{ _user_id: 'e2e-1', _email: 'e2e@example.com', _first_name: 'Ed' }]);
    expect(contact.status).toBe(202);
    expect(contact.body).toEqual({ entity: { successful: 1, failed: 0, items: [{ status: 'success', _user_id: 'e2e-1' }] } });
    expect(contact.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    const event = await post('/events', [{ _user_id: 'e2e-1', _event_id: `e2e-${randomUUID()}`, _event_type: 'order_completed' }]);
    expect(event).toMatchObject({ status: 202, body: { entity: { successful: 1, failed: 0 } } });
    const deleted = await fetch(`${stream}/contacts/e2e-1`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    expect(deleted.status).toBe(202);
    expect(await deleted.json()).toEqual({ entity: { _user_id: 'e2e-1', deleted: true } });
  });

  it('answers 422 with per-item errors when every item fails, 400 for a body that is not an array', async () => {
    const res = await post('/contacts', [{ _email: 'no-id@example.com' }, { _user_id: 'e2e-2', _unknown_reserved: 1 }]);
    expect(res.status).toBe(422);
    expect(res.body.entity).toEqual({
      successful: 0,
      failed: 2,
      items: [
        { status: 'error', _user_id: null, errors: { _user_id: ['is required'] } },
        { status: 'error', _user_id: 'e2e-2', errors: { _unknown_reserved: ['unknown reserved attribute _unknown_reserved'] } },
      ],
    });
    const bad = await post('/events', { _user_id: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toEqual(expect.any(String));
  });

  describe('compressed bodies (ADR 0012): the gateway forwards them as sent, ingest inflates them', () => {
    const send = async (path: string, encoding: string, body: Buffer | ReadableStream<Uint8Array>) => {
      const init = { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-encoding': encoding }, body, duplex: 'half' };
      const res = await fetch(`${stream}${path}`, init as RequestInit);
      return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
    };
    const attributesOf = async (userId: string): Promise<Json> => {
      const db = new Client({ connectionString: system.postgresUrl });
      await db.connect();
      try {
        const { rows } = await db.query(`SELECT attributes FROM source_contacts WHERE data_source_id = $1 AND user_id = $2`, [dataSource, userId]);
        return rows[0]?.attributes ?? null;
      } finally {
        await db.end();
      }
    };
    const tag = randomUUID().slice(0, 8);

    it('takes a gzip batch of contacts (stored as sent), a deflate batch of events, and a gzip body sent chunked', async () => {
      const contacts = [{ _user_id: `gz-${tag}-1`, _first_name: 'Zoé' }, { _user_id: `gz-${tag}-2`, city: 'Paris' }];
      const written = await send('/contacts', 'gzip', gzipSync(JSON.stringify(contacts)));
      expect(written).toMatchObject({ status: 202, body: { entity: { successful: 2, failed: 0 } } });
      expect(written.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
      expect(await attributesOf(`gz-${tag}-1`)).toMatchObject({ _first_name: 'Zoé' });
      expect(await attributesOf(`gz-${tag}-2`)).toMatchObject({ city: 'Paris' });

      const events = contacts.map((c) => ({ _user_id: c._user_id, _event_id: `gz-${randomUUID()}`, _event_type: 'order_completed' }));
      expect(await send('/events', 'Deflate', deflateSync(JSON.stringify(events)))).toMatchObject({ status: 202, body: { entity: { successful: 2, failed: 0 } } });

      // No Content-Length: the gateway streams it, counting compressed bytes.
      const many = Array.from({ length: 100 }, (_, i) => ({ _user_id: `gz-${tag}-3-${i}`, note: `${i}`.padEnd(2000, 'x') }));
      const chunked = gzipSync(JSON.stringify(many));
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < chunked.length; i += 100) controller.enqueue(chunked.subarray(i, i + 100));
          controller.close();
        },
      });
      expect(await send('/contacts', 'gzip', body)).toMatchObject({ status: 202, body: { entity: { successful: 100, failed: 0 } } });
      expect(await attributesOf(`gz-${tag}-3-99`)).toMatchObject({ note: '99'.padEnd(2000, 'x') });
    });

    it('refuses a zip bomb with a 413 at once, and a compressed body over the limit at the gateway', async () => {
      // 16 gzip members of 64 MiB of zeros: 1,044,000 bytes that inflate to 1 GiB.
      const member = gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
      const bomb = Buffer.concat(Array.from({ length: 16 }, () => member));
      const started = Date.now();
      const refused = await send('/events', 'gzip', bomb);
      expect(refused).toMatchObject({ status: 413, body: { statusCode: 413, message: `request body larger than ${INGEST_BODY_LIMIT} bytes once decompressed (Content-Encoding gzip)` } });
      // Inflating it all takes ingest seconds (and 1 GiB); capped, it stops at the limit.
      expect(Date.now() - started).toBeLessThan(3000);
      // Compressed bytes over the limit never reach ingest.
      const incompressible = gzipSync(randomBytes(INGEST_BODY_LIMIT + 1024));
      expect(await send('/events', 'gzip', incompressible)).toMatchObject({ status: 413, body: { message: `request body larger than ${INGEST_BODY_LIMIT} bytes` } });
    });

    it('answers a corrupt gzip with a 400 naming Content-Encoding, an unknown coding with a 415 and Accept-Encoding', async () => {
      const gzipped = gzipSync(JSON.stringify([{ _user_id: `gz-${tag}-4` }]));
      const corrupt = await send('/contacts', 'gzip', gzipped.subarray(0, gzipped.length - 8));
      expect(corrupt).toMatchObject({ status: 400, body: { message: 'Content-Encoding gzip: the body is not valid gzip data (unexpected end of file)' } });
      const unknown = await send('/contacts', 'br', gzipped);
      expect(unknown).toMatchObject({ status: 415, body: { message: 'Content-Encoding br is not supported: send the JSON body compressed with gzip or deflate, or uncompressed (identity)' } });
      expect(unknown.headers.get('accept-encoding')).toBe('gzip, deflate, identity');
      expect(unknown.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
      expect(await attributesOf(`gz-${tag}-4`)).toBeNull();
    });
  });

  describe('delete for good, automation triggers by audience contact', () => {
    const tag = randomUUID().slice(0, 8);
    // Personal data only the deleted contact ever held: nothing may keep it afterwards.
    const pii = { firstName: `Delphine${tag}`, nickname: `only-web-${tag}` };
    const email = `del-${tag}@example.com`;
    let db: Client;
    let triggers: { consumer: Consumer; seen: Array<{ key: string; value: Json }> };
    let p: { uid: string; id: string; org: string; web: string; crm: string; webToken: string; crmToken: string; productToken: string };
    const webEvents = Array.from({ length: 3 }, () => `ev-web-${randomUUID()}`);
    const crmEvents = Array.from({ length: 2 }, () => `ev-crm-${randomUUID()}`);
    const signupNow = `ev-signup-${randomUUID()}`;
    const signupOld = `ev-signup-old-${randomUUID()}`;

    beforeAll(async () => {
      db = new Client({ connectionString: system.postgresUrl });
      await db.connect();
      const org = (await admin('POST', '/organizations', { name: `delete-${tag}`, plan: 'xl' })).entity.id;
      const uid = (await admin('POST', `/organizations/${org}/projects`, { name: `Delete e2e ${tag}`, mergingAttributes: ['_email'] })).entity.uid;
      await admin('POST', `/projects/${uid}/event-types`, { uid: 'order_completed', name: 'Order completed', category: 'ecommerce' });
      await admin('POST', `/projects/${uid}/event-types`, { uid: 'signup', name: 'Signup', category: 'crm', automation: true });
      const web = await admin('POST', `/projects/${uid}/datasources`, { name: 'Web' });
      const crm = await admin('POST', `/projects/${uid}/datasources`, { name: 'CRM', connector: 'crm', priority: 1 });
      const product = await admin('POST', `/organizations/${org}/tokens`, { scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_FULL'], projects: [uid] });
      const [{ id }] = (await db.query(`SELECT id FROM projects WHERE uid = $1`, [uid])).rows;
      p = { uid, id, org, web: web.entity.id, crm: crm.entity.id, webToken: web.metadata.token, crmToken: crm.metadata.token, productToken: product.metadata.token };
      const kafka = new Kafka({ brokers: system.brokers.split(','), clientId: 'ingest-e2e', logLevel: logLevel.NOTHING });
      triggers = { consumer: kafka.consumer({ groupId: `ingest-e2e-${randomUUID()}`, maxWaitTimeInMs: 100 }), seen: [] };
      await triggers.consumer.connect();
      await triggers.consumer.subscribe({ topic: Topics.automationTriggers, fromBeginning: true });
      await triggers.consumer.run({
        eachMessage: async ({ message }) => {
          const value = JSON.parse(message.value?.toString() ?? 'null');
          if (value?.projectId === p.id) triggers.seen.push({ key: message.key?.toString() ?? '', value });
        },
      });
    }, 60000);

    afterAll(async () => {
      await triggers?.consumer.disconnect();
      await db?.end();
    });

    const write = async (dataSource: string, token: string, path: string, body: unknown) => {
      const res = await fetch(`${BASE}/v1/project/${p.uid}/datasource/${dataSource}/stream${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(202);
      return (await res.json()) as Json;
    };
    /** The audience contact a source `_user_id` belongs to (public read), or null (404). */
    const audienceOfUser = async (userId: string): Promise<Json | null> => {
      const res = await fetch(`${BASE}/v1/project/${p.uid}/audience/user/${encodeURIComponent(userId)}`, { headers: { authorization: `Bearer ${p.productToken}` } });
      if (res.status === 404) return null;
      expect(res.status).toBe(200);
      return ((await res.json()) as Json).entity;
    };
    const eventsOf = async (audienceId: string): Promise<{ ids: string[]; total: number }> => {
      const url = `${AUDIENCE}/v1/project/${p.uid}/audience/${audienceId}/events?_start=0&_limit=500`;
      const principal = principalHeader({ organization: { id: p.org }, project: { id: p.id, uid: p.uid } }, { scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_EVENTS'] }, { app: 'audience', url });
      const res = await fetch(url, { headers: principal });
      expect(res.status).toBe(200);
      const body = (await res.json()) as Json;
      return { ids: body.entity.map((e: Json) => e.id).sort(), total: body.metadata.total };
    };
    const tablesHolding = (needle: string) => tablesHoldingIn(db, needle);

    it('merges two sources by email; an automation event inside the window triggers with the shared audience id, one outside does not', async () => {
      await write(p.web, p.webToken, '/contacts', [{ _user_id: 'del-1', _email: email, _first_name: pii.firstName, nickname: pii.nickname }]);
      await write(p.crm, p.crmToken, '/contacts', [{ _user_id: 'crm-1', _email: email.toUpperCase(), _last_name: 'Kept', city: 'Paris' }]);
      const merged = await waitFor('both sources in one audience contact', async () => {
        const [a, b] = [await audienceOfUser('del-1'), await audienceOfUser('crm-1')];
        // b, read last, shows the merge that attached crm-1: a may predate it (same id, web's attributes only).
        return a && b && a.id === b.id ? b : null;
      }, { timeoutMs: 30000, intervalMs: 300 });
      expect(merged).toMatchObject({ _first_name: pii.firstName, nickname: pii.nickname, _last_name: 'Kept', city: 'Paris' });

      const order = (userId: string, eventId: string) => ({ _user_id: userId, _event_id: eventId, _event_type: 'order_completed' });
      await write(p.web, p.webToken, '/events', webEvents.map((e) => order('del-1', e)));
      const old = new Date(Date.now() - 2 * 3600_000).toISOString();
      await write(p.crm, p.crmToken, '/events', [
        ...crmEvents.map((e) => order('crm-1', e)),
        { _user_id: 'crm-1', _event_id: signupNow, _event_type: 'signup' },
        { _user_id: 'crm-1', _event_id: signupOld, _event_type: 'signup', _event_date: old },
      ]);
      const [trigger] = await waitFor('the trigger', async () => {
        const found = triggers.seen.filter((t) => t.value.eventId === signupNow);
        return found.length ? found : null;
      }, { timeoutMs: 30000 });
      expect(trigger).toMatchObject({ key: `${p.id}/${merged.id}`, value: { audienceId: merged.id, dataSourceId: p.crm, userId: 'crm-1', eventType: 'signup' } });

      const all = [...webEvents, ...crmEvents, signupNow, signupOld].sort();
      const attached = await waitFor('every event attached to the merged contact', async () => {
        const e = await eventsOf(merged.id);
        return e.total === all.length ? e : null;
      }, { timeoutMs: 60000, intervalMs: 500 });
      expect(attached.ids).toEqual(all);
      expect(triggers.seen.some((t) => t.value.eventId === signupOld)).toBe(false);
    }, 120000);

    it('DELETE removes the contact for good: its data leaves Postgres, the merged contact splits back, its events attach to no one', async () => {
      const before = (await audienceOfUser('crm-1'))!;
      const res = await fetch(`${BASE}/v1/project/${p.uid}/datasource/${p.web}/stream/contacts/del-1`, { method: 'DELETE', headers: { authorization: `Bearer ${p.webToken}` } });
      expect(res.status).toBe(202);

      await waitFor('the deleted contact gone from the audience', async () => (await audienceOfUser('del-1')) === null, { timeoutMs: 30000, intervalMs: 300 });
      const rest = (await audienceOfUser('crm-1'))!;
      // What only the deleted contact supplied is gone; the CRM contact's own values stand.
      expect(rest).toMatchObject({ _email: email.toUpperCase(), _last_name: 'Kept', city: 'Paris' });
      expect(rest._first_name).toBeUndefined();
      expect(rest.nickname).toBeUndefined();
      expect(rest._datasources).toEqual([p.crm]);

      await waitFor('both outboxes drained', async () => (await tablesHolding(pii.firstName)).length === 0, { timeoutMs: 20000 });
      expect(await tablesHolding(pii.nickname)).toEqual([]);
      const [row] = (await db.query(`SELECT attributes, attribute_at, deleted_at FROM source_contacts WHERE project_id = $1 AND data_source_id = $2 AND user_id = 'del-1'`, [p.id, p.web])).rows;
      expect(row).toMatchObject({ attributes: {}, attribute_at: {}, deleted_at: expect.any(Date) });
      for (const table of ['merge_keys', 'audience_members']) {
        const { rows } = await db.query(`SELECT 1 FROM ${table} WHERE project_id = $1 AND data_source_id = $2 AND user_id = 'del-1'`, [p.id, p.web]);
        expect({ table, rows }).toEqual({ table, rows: [] });
      }
      const lineage = (await db.query(`SELECT lineage, datasources FROM audience_contacts WHERE project_id = $1`, [p.id])).rows;
      expect(lineage).toEqual([{ lineage: expect.not.objectContaining({ _first_name: expect.anything() }), datasources: [p.crm] }]);
      expect(Object.values(lineage[0].lineage)).not.toContain(p.web);

      const own = [...crmEvents, signupNow, signupOld].sort();
      // The purge is a ClickHouse mutation applied part by part, and the read's total and page are
      // two queries: wait until both show the contact without the deleted member's events.
      const left = await waitFor('only the CRM contact’s events attached', async () => {
        const e = await eventsOf(rest.id);
        return e.total === own.length && JSON.stringify([...e.ids].sort()) === JSON.stringify(own) ? e : null;
      }, { timeoutMs: 60000, intervalMs: 500 });
      expect(left.ids).toEqual(own);
      expect(rest.id).toBe(before.id); // the older member kept the id
    }, 120000);

    it('a re-created contact with the same _user_id starts fresh', async () => {
      await write(p.web, p.webToken, '/contacts', [{ _user_id: 'del-1', _first_name: 'Again' }]);
      const again = await waitFor('the re-created contact', () => audienceOfUser('del-1'), { timeoutMs: 30000, intervalMs: 300 });
      expect(again.nickname).toBeUndefined();
      expect(again._email).toBeUndefined();
      expect(again._first_name).toBe('Again');
      expect(again.id).not.toBe((await audienceOfUser('crm-1'))!.id);
      expect(await tablesHolding(pii.nickname)).toEqual([]);
    }, 60000);
  });
});
