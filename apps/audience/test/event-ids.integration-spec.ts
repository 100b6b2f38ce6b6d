import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import { type DataMode, type Scope } from '@meld/contracts';
import { seedTenancy, signedPrincipal, startAppUnderTest, type Json } from '@meld/fixtures';
import { migratedTestClickHouse } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { appDefinition } from '../src/app.definition';

const LIST_SCOPES: Scope[] = ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_EVENTS', 'PROJECT_AUDIENCE_LIST', 'PROJECT_AUDIENCE_DATA_BASIC'];
const DAY = 86_400;

/**
 * An `_event_id` is the source's text and may hold an email or a phone number (`order-<email>-1`):
 * every read of events shows it as it shows parameters and user ids, and the event scroll id does
 * not carry it readable (ADR 0354).
 */
describe('event ids under the data mode', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  let tenancy: Awaited<ReturnType<typeof seedTenancy>>;
  const audienceId = randomUUID();
  const now = Math.floor(Date.now() / 1000);
  // Two events in the same second, so a scroll position falls between them on the event id.
  const written = [
    // Underscores join words as dashes do: the number in it is as plain to read.
    { id: 'order_0698765432_5', ts: now - 5 * DAY },
    // The longest id ingest takes (256 characters), 3 bytes each in UTF-8: its scroll id must still be taken back.
    { id: '\u4e2d'.repeat(256), ts: now - 4 * DAY },
    { id: 'order-ada@example.com-1', ts: now - 3 * DAY },
    { id: 'sms-+33612345678-2', ts: now - 2 * DAY },
    { id: 'sms-+33612345678-3', ts: now - 2 * DAY },
    { id: 'plain-4', ts: now - DAY },
  ];
  const secrets = ['ada@example.com', '612345678', '698765432'];

  beforeAll(async () => {
    ch = await migratedTestClickHouse();
    ({ app, base, db } = await startAppUnderTest(appDefinition));
    tenancy = await seedTenancy(db, 'eventids');
    await db.query(`INSERT INTO audience_contacts (project_id, id, version) VALUES ($1, $2, 1)`, [tenancy.project.id, audienceId]);
    await ch.insert('audience_membership', [{ project_id: tenancy.project.id, data_source_id: tenancy.dataSource.id, user_id: 'u1', audience_id: audienceId, version: '1', deleted: 0 }]);
    await ch.insert(
      'events',
      written.map((e) => ({ project_id: tenancy.project.id, data_source_id: tenancy.dataSource.id, user_id: 'u1', event_id: e.id, event_type: 'purchase', event_date: e.ts, received_at: e.ts + 1, param_keys: [], param_values: [] })),
    );
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  const request = async (method: 'GET' | 'POST', path: string, dataMode: DataMode, body?: unknown): Promise<{ status: number; body: Json }> => {
    const url = `${base}/v1/project/${tenancy.project.uid}${path}`;
    const principal = signedPrincipal(
      { kind: 'product', tokenId: randomUUID(), organizationId: tenancy.organization.id, plan: 'm', scopes: LIST_SCOPES, project: { id: tenancy.project.id, uid: tenancy.project.uid, dataMode }, dataSourceId: null },
      { app: 'audience', method, url },
    );
    const res = await fetch(url, { method, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...principal }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };
  const idsOf = (body: Json): string[] => body.entity.map((e: { id: string }) => e.id);
  const leaks = (text: string) => secrets.filter((s) => text.includes(s));

  async function scrollAll(dataMode: DataMode) {
    const seen: string[] = [];
    const scrollIds: string[] = [];
    let scrollId: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const res = await request('POST', '/event/scroll', dataMode, { size: 1, ...(scrollId ? { scrollId } : {}) });
      expect(res.status).toBe(200);
      seen.push(...idsOf(res.body));
      scrollId = res.body.metadata.scrollId ?? undefined;
      if (!scrollId) return { seen, scrollIds };
      scrollIds.push(scrollId);
    }
    throw new Error('the scroll did not end');
  }

  it('masks the emails and phone numbers in event ids in anonymized mode, in the contact read, the search and the scroll', async () => {
    const read = await request('GET', `/audience/${audienceId}/events`, 'anonymized');
    expect(read.status).toBe(200);
    expect(idsOf(read.body)).toHaveLength(written.length);
    expect(leaks(JSON.stringify(read.body))).toEqual([]);
    expect(idsOf(read.body)).toContain('plain-4');

    const search = await request('POST', '/event/search', 'anonymized', { size: 10 });
    expect(idsOf(search.body)).toEqual(idsOf(read.body));
    expect(leaks(JSON.stringify(search.body))).toEqual([]);

    const { seen, scrollIds } = await scrollAll('anonymized');
    // Every event once, in order, though two ids mask alike.
    expect(seen).toEqual([...idsOf(search.body)].reverse());
    expect(scrollIds).toHaveLength(written.length - 1);
    for (const id of scrollIds) expect(leaks(Buffer.from(id, 'base64url').toString('utf8'))).toEqual([]);
  });

  it('shows the ids in clear where the caller reads emails and phones, and scrolls them once each', async () => {
    const { seen, scrollIds } = await scrollAll('normal');
    expect(seen).toEqual(written.map((e) => e.id));
    // The position never travels readable: the same scroll id serves every view.
    for (const id of scrollIds) expect(Buffer.from(id, 'base64url').toString('utf8')).not.toMatch(/order-|sms-|plain-/);
  });

  it('refuses a scroll id whose sealed position was altered', async () => {
    const first = await request('POST', '/event/scroll', 'normal', { size: 1 });
    const state = JSON.parse(Buffer.from(first.body.metadata.scrollId, 'base64url').toString('utf8'));
    const sealed = Buffer.from(state.x, 'base64url');
    sealed[sealed.length - 1] ^= 1;
    const forged = Buffer.from(JSON.stringify({ ...state, x: sealed.toString('base64url') })).toString('base64url');
    const res = await request('POST', '/event/scroll', 'normal', { size: 1, scrollId: forged });
    expect([res.status, res.body.details.fields[0].path]).toEqual([400, 'scrollId']);
  });
});
