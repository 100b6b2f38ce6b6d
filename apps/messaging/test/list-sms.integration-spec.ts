import { randomUUID } from 'node:crypto';
import { type Json, principalHeader, signedPrincipal } from '@meld/fixtures';
import { waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { type Smsc, type Tenancy, seedContact, seedSmsTenancy, startMessaging } from './app.fixture';

type SmsTenancy = Tenancy & { sender: { id: string } };

describe('GET /v1/project/:project/channel/sms/sms: message history through the list query filter', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let smsc: Smsc;
  let t: SmsTenancy;
  let other: SmsTenancy;
  const sent: Record<string, { id: string; audienceId: string }> = Object.create(null);

  const send = async (tenancy: SmsTenancy, phone: string) => {
    const audienceId = await seedContact(db, tenancy.project.id, { _user_id: `u-${phone}`, _phone_mobile: phone });
    const url = `/v1/project/${tenancy.project.uid}/channel/sms/sms/direct/default/${audienceId}`;
    const res = await fetch(`${base}${url}`, {
      method: 'POST',
      headers: { ...principalHeader(tenancy, { scopes: ['PROJECT_DIRECT_WRITE'] }, { app: 'messaging', method: 'POST', url }), 'content-type': 'application/json' },
      body: JSON.stringify({ text: `code for ${phone}` }),
    });
    expect(res.status).toBe(201);
    return { id: ((await res.json()) as Json).entity.id as string, audienceId };
  };

  beforeAll(async () => {
    ({ app, base, db, smsc } = await startMessaging());
    t = await seedSmsTenancy(db);
    other = await seedSmsTenancy(db);
    for (const phone of ['+447400123441', '+447400123413', '+447400123499']) sent[phone] = await send(t, phone);
    await send(other, '+447400123442');
    await waitFor('final statuses', async () => {
      const rows = await db.query(`SELECT count(*)::int AS n FROM sms_messages WHERE project_id = $1 AND status IN ('delivered', 'undelivered', 'failed')`, [t.project.id]);
      return rows[0].n === 3 || undefined;
    }, { timeoutMs: 10_000 });
  });
  afterAll(async () => {
    await app?.close();
    await smsc?.close();
  });

  const list = async (query: string, scopes: Json[] = ['PROJECT_DIRECT_READ'], tenancy = t) => {
    const url = `/v1/project/${tenancy.project.uid}/channel/sms/sms${query ? `?${query}` : ''}`;
    const res = await fetch(`${base}${url}`, { headers: principalHeader(tenancy, { scopes }, { app: 'messaging', url }) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const ids = async (query: string) => {
    const res = await list(query);
    expect(res.status).toBe(200);
    return res.body.entity.map((m: Json) => m.id);
  };

  it("lists the project's messages newest first, with paging metadata, and nothing of another project", async () => {
    const { body } = await list('');
    expect(body.entity.map((m: Json) => m.id)).toEqual([sent['+447400123499']!.id, sent['+447400123413']!.id, sent['+447400123441']!.id]);
    expect(body.metadata).toEqual({ start: 0, limit: 50, count: 3, total: 3 });
    expect(body.entity[2]).toEqual({
      id: sent['+447400123441']!.id, status: 'delivered', encoding: 'GSM-7', messagesCount: 1, pricePerSms: 0.04, audienceId: sent['+447400123441']!.audienceId,
      senderId: t.sender.id, destination: expect.not.stringContaining('7400123441'), text: null, error: null, createdAt: expect.any(String), updatedAt: expect.any(String),
    });
  });

  it('filters on status, audienceId, senderId and createdAt; sorts and pages', async () => {
    expect(await ids('status_eq=delivered')).toEqual([sent['+447400123441']!.id]);
    expect(await ids('status_in=failed|undelivered&_sort=createdAt:+')).toEqual([sent['+447400123413']!.id, sent['+447400123499']!.id]);
    expect(await ids(`audienceId_eq=${sent['+447400123413']!.audienceId}`)).toEqual([sent['+447400123413']!.id]);
    expect(await ids(`senderId_eq=${t.sender.id}&status_ne=failed`)).toHaveLength(2);
    expect(await ids(`createdAt_gt=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toEqual([]);
    expect(await ids('createdAt_gte=2020-01-01T00:00:00Z&_start=1&_limit=1')).toEqual([sent['+447400123413']!.id]);
    const q = encodeURIComponent(JSON.stringify({ filter: [{ field: 'status', operator: 'eq', value: 'undelivered' }] }));
    expect(await ids(`_q=${q}`)).toEqual([sent['+447400123413']!.id]);
  });

  it('the text and the number only for tokens that may read PII', async () => {
    const full = await list('status_eq=delivered', ['PROJECT_DIRECT_READ', 'PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_BASIC']);
    expect(full.body.entity[0]).toMatchObject({ text: 'code for +447400123441', destination: '+447400123441' });
    const plain = (await list('status_eq=delivered')).body.entity[0];
    expect([plain.text, plain.destination]).toEqual([null, expect.not.stringContaining('7400123441')]);
  });

  it('a blocked project reads no message: 403, list and single read alike (ADR 0121)', async () => {
    for (const url of [`/v1/project/${t.project.uid}/channel/sms/sms`, `/v1/project/${t.project.uid}/channel/sms/sms/${sent['+447400123441']!.id}`]) {
      const principal = { kind: 'product' as const, tokenId: randomUUID(), organizationId: t.organization.id, plan: 'm' as const, scopes: ['PROJECT_DIRECT_READ' as const], dataSourceId: null };
      const blocked = await fetch(`${base}${url}`, { headers: signedPrincipal({ ...principal, project: { id: t.project.id, uid: t.project.uid, dataMode: 'blocked' } }, { app: 'messaging', url }) });
      expect([blocked.status, ((await blocked.json()) as Json).message]).toEqual([403, expect.stringContaining('blocked')]);
      const anonymized = await fetch(`${base}${url}`, { headers: signedPrincipal({ ...principal, project: { id: t.project.id, uid: t.project.uid, dataMode: 'anonymized' } }, { app: 'messaging', url }) });
      expect(anonymized.status).toBe(200);
    }
  });

  it("lists and reads a merged contact's messages under its id: those sent to an id it absorbed too, found by either id", async () => {
    const merged = (await seedSmsTenancy(db)) as SmsTenancy;
    const before = await send(merged, '+447400123451');
    const after = await send(merged, '+447400123452');
    // identity-merge absorbs the first contact into the second: its row goes, its id resolves through audience_aliases (ADR 0051).
    await db.query(`INSERT INTO audience_aliases (project_id, absorbed_id, survivor_id) VALUES ($1, $2, $3)`, [merged.project.id, before.audienceId, after.audienceId]);
    await db.query(`DELETE FROM audience_contacts WHERE project_id = $1 AND id = $2`, [merged.project.id, before.audienceId]);
    const listed = async (query: string) => {
      const res = await list(query, ['PROJECT_DIRECT_READ'], merged);
      expect(res.status).toBe(200);
      return res.body.entity.map((m: Json) => [m.id, m.audienceId]);
    };
    const both = [[after.id, after.audienceId], [before.id, after.audienceId]];
    expect(await listed(`audienceId_eq=${after.audienceId}`)).toEqual(both);
    expect(await listed(`audienceId_eq=${before.audienceId}`)).toEqual(both);
    expect(await listed(`audienceId_in=${before.audienceId}|${randomUUID()}`)).toEqual(both);
    expect(await listed(`audienceId_ne=${after.audienceId}`)).toEqual([]);
    // As every read of a contact id, the case of its letters does not matter.
    expect(await listed(`audienceId_eq=${after.audienceId.toUpperCase()}`)).toEqual(both);
    const url = `/v1/project/${merged.project.uid}/channel/sms/sms/${before.id}`;
    const read = await fetch(`${base}${url}`, { headers: principalHeader(merged, { scopes: ['PROJECT_DIRECT_READ'] }, { app: 'messaging', url }) });
    expect(((await read.json()) as Json).entity.audienceId).toBe(after.audienceId);
  });

  it('audienceId filters alike through every equality operator, negated, nested and sorted: a merged contact, a deleted one, another (ADR 0159)', async () => {
    const p = (await seedSmsTenancy(db)) as SmsTenancy;
    const [absorbed, survivor, gone, kept] = [await send(p, '+447400123461'), await send(p, '+447400123462'), await send(p, '+447400123463'), await send(p, '+447400123464')];
    await db.query(`INSERT INTO audience_aliases (project_id, absorbed_id, survivor_id) VALUES ($1, $2, $3)`, [p.project.id, absorbed.audienceId, survivor.audienceId]);
    await db.query(`DELETE FROM audience_contacts WHERE project_id = $1 AND id = ANY($2::uuid[])`, [p.project.id, [absorbed.audienceId, gone.audienceId]]);
    const listed = async (query: string) => {
      const res = await list(query, ['PROJECT_DIRECT_READ'], p);
      expect([query, res.status]).toEqual([query, 200]);
      return res.body.entity.map((m: Json) => m.id);
    };
    const merged = [survivor.id, absorbed.id];
    expect(await listed(`audienceId_eqi=${absorbed.audienceId.toUpperCase()}`)).toEqual(merged);
    expect(await listed(`audienceId_ini=${gone.audienceId.toUpperCase()}|x`)).toEqual([gone.id]);
    expect(await listed(`audienceId_eq=${gone.audienceId}`)).toEqual([gone.id]);
    expect(await listed(`audienceId_nin=${absorbed.audienceId}|${gone.audienceId}`)).toEqual([kept.id]);
    expect(await listed(`audienceId_nei=${survivor.audienceId.toUpperCase()}`)).toEqual([kept.id, gone.id]);
    expect(await listed('audienceId_eq=x')).toEqual([]);
    expect(await listed('audienceId_ne=x')).toEqual([kept.id, gone.id, survivor.id, absorbed.id]);
    expect(await listed(`audienceId_contains=${survivor.audienceId.slice(0, 13)}`)).toEqual(merged);
    const cond = (field: string, operator: string, value: unknown) => ({ field, operator, value });
    const nested = { operator: 'or', value: [{ operator: 'and', value: [cond('audienceId', 'eq', absorbed.audienceId), cond('createdAt', 'gte', '2020-01-01T00:00:00Z')] }, cond('audienceId', 'in', [kept.audienceId])] };
    expect(await listed(`_q=${encodeURIComponent(JSON.stringify({ filter: [nested] }))}`)).toEqual([kept.id, ...merged]);
    const contacts = [{ id: survivor.audienceId, sms: [absorbed.id, survivor.id] }, { id: kept.audienceId, sms: [kept.id] }].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(await listed(`audienceId_in=${kept.audienceId}|${absorbed.audienceId}&_sort=audienceId:+,createdAt:+`)).toEqual(contacts.flatMap((c) => c.sms));
  });

  it('400 names a bad parameter: unknown field, the text (not filterable), a bad operator value, _group', async () => {
    for (const [query, parameter] of [['colour_eq=red', 'colour_eq'], ['text_eq=hello', 'text_eq'], ['createdAt_gt=yesterday', 'createdAt_gt'], ['_group=daily', '_group']]) {
      const res = await list(query!);
      expect([query, res.status, res.body.details?.parameter]).toEqual([query, 400, parameter]);
    }
  });
});
