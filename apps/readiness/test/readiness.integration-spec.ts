import { randomUUID } from 'node:crypto';
import { OrganizationEntity, ProjectEntity, SenderCountryEntity, SenderEntity } from '@meld/db';
import { type Json, principalHeader, seedTenancy, signedPrincipal } from '@meld/fixtures';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { ReadinessResponseSchema } from '../src/readiness/readiness.schema';
import { startReadiness } from './app.fixture';

type Tenancy = Awaited<ReturnType<typeof seedTenancy>>;
type Country = { country: string; accepted?: boolean; effectiveStatus?: string; price?: number };

describe('GET /v1/project/:project/readiness[/channel/:channel] (real Postgres)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;

  beforeAll(async () => {
    ({ app, base, db } = await startReadiness());
  });
  afterAll(() => app?.close());

  async function sender(t: Tenancy, channel: 'sms' | 'rcs', alias: string, status: string, countries: Country[], name = `${alias} sender`) {
    const s = await db.getRepository(SenderEntity).save({ projectId: t.project.id, channel, alias, name, status });
    await db.getRepository(SenderCountryEntity).save(countries.map((c) => ({ senderId: s.id, price: 0.05, ...c })));
    return s;
  }
  const contact = (t: Tenancy) => db.query(`INSERT INTO audience_contacts (project_id, id) VALUES ($1, $2) RETURNING id`, [t.project.id, randomUUID()]).then((r) => r[0].id as string);
  const legal = (t: Tenancy, status: string) => db.getRepository(ProjectEntity).update(t.project.id, { legalProfileStatus: status as ProjectEntity['legalProfileStatus'] });
  const organization = (t: Tenancy, values: Partial<OrganizationEntity>) => db.getRepository(OrganizationEntity).update(t.organization.id, values);

  async function read(t: Tenancy, path = '') {
    const url = `/v1/project/${t.project.uid}/readiness${path}`;
    const res = await fetch(`${base}${url}`, { headers: principalHeader(t, {}, { app: 'readiness', url }) });
    const body = (await res.json()) as Json;
    if (res.status === 200) ReadinessResponseSchema.parse(body);
    return { status: res.status, body, report: body.entity };
  }
  const steps = (report: Json) => Object.fromEntries(report.steps.map((s: Json) => [s.key, s.disabled ? 'disabled' : s.completed]));

  it('a new project: nothing done, not operational; funds disabled when not prepaid', async () => {
    const t = await seedTenancy(db);
    const { status, report } = await read(t);
    expect(status).toBe(200);
    expect(report).toEqual({
      scope: 'project',
      channel: null,
      percent: 0,
      operational: false,
      steps: [
        { key: 'import', completed: false, isBlocker: false, disabled: false },
        { key: 'channels', completed: false, isBlocker: true, disabled: false },
        { key: 'legal_profile', completed: false, isBlocker: true, disabled: false },
        { key: 'funds', completed: false, isBlocker: false, disabled: true },
      ],
      warnings: [],
      reach: null,
    });
  });

  it('each step follows its fact; percent over not-disabled steps, rounded down', async () => {
    const t = await seedTenancy(db);
    await contact(t);
    expect([steps((await read(t)).report), (await read(t)).report.percent]).toEqual([{ import: true, channels: false, legal_profile: false, funds: 'disabled' }, 33]);
    await sender(t, 'rcs', 'meld_agent', 'active', []);
    await legal(t, 'verified');
    const done = (await read(t)).report;
    expect([steps(done), done.percent, done.operational]).toEqual([{ import: true, channels: true, legal_profile: true, funds: 'disabled' }, 100, true]);
    await organization(t, { prepaid: true, funds: 0 });
    const broke = (await read(t)).report;
    expect([steps(broke), broke.percent, broke.operational]).toEqual([{ import: true, channels: true, legal_profile: true, funds: false }, 75, false]);
    await organization(t, { funds: 0.0001 });
    expect((await read(t)).report.operational).toBe(true);
    await organization(t, { funds: -5 });
    expect(steps((await read(t)).report).funds).toBe(false);
  });

  it('channel scope: sms add_sender, rcs add_agent (named by agent name), reach deduplicated and sorted; other channels 404', async () => {
    const t = await seedTenancy(db);
    await legal(t, 'verified');
    await sender(t, 'sms', 'SHOP', 'active', [{ country: 'GB' }, { country: 'FR' }, { country: 'DE', accepted: false, effectiveStatus: 'blocked' }]);
    await sender(t, 'sms', 'ALERTS', 'active', [{ country: 'FR' }, { country: 'BE', effectiveStatus: 'pending' }]);
    await sender(t, 'sms', 'OLD', 'inactive', [{ country: 'IT' }]);
    await sender(t, 'sms', 'EMPTY', 'active', [{ country: 'ES', accepted: false }]);
    await sender(t, 'rcs', 'meld_agent', 'active', [{ country: 'NL' }]);
    const sms = (await read(t, '/channel/sms')).report;
    expect(sms).toMatchObject({ scope: 'channel', channel: 'sms', percent: 100, operational: true });
    expect(steps(sms)).toEqual({ legal_profile: true, add_sender: true, funds: 'disabled' });
    expect(sms.reach).toEqual({ reachableCountries: ['BE', 'FR', 'GB'], senders: { ALERTS: ['BE', 'FR'], SHOP: ['FR', 'GB'] } });
    expect(Object.keys(sms.reach.senders)).toEqual(['ALERTS', 'SHOP']);
    const rcs = (await read(t, '/channel/rcs')).report;
    expect(steps(rcs)).toEqual({ legal_profile: true, add_agent: true, funds: 'disabled' });
    expect(rcs.reach).toEqual({ reachableCountries: ['NL'], senders: { meld_agent: ['NL'] } });
    for (const other of ['email', 'whatsapp', 'SMS', 'constructor', '__proto__']) {
      const res = await read(t, `/channel/${other}`);
      expect([other, res.status, res.body.message]).toEqual([other, 404, expect.stringContaining('channels are sms, rcs')]);
    }
  });

  it('warnings: sender_not_effective rows and the other keys, on the real data', async () => {
    const t = await seedTenancy(db);
    const shop = await sender(t, 'sms', 'SHOP', 'active', [{ country: 'FR', effectiveStatus: 'pending' }, { country: 'GB' }, { country: 'DE', accepted: false, effectiveStatus: 'blocked' }], 'Shop');
    const paused = await sender(t, 'sms', 'PAUSED', 'inactive', [{ country: 'FR', effectiveStatus: 'blocked' }], 'Paused');
    await sender(t, 'sms', 'FREE', 'active', [{ country: 'IE', price: 0 }], 'Free');
    await db.getRepository(ProjectEntity).update(t.project.id, { defaultSmsSender: paused.id });
    const report = (await read(t)).report;
    expect(report.warnings).toEqual([
      { key: 'sender_not_effective', severity: 'warning', count: 1, rows: [{ senderId: shop.id, senderName: 'Shop', country: 'FR', effectiveStatus: 'pending' }] },
      { key: 'default_sender_not_active', severity: 'warning', count: 1, rows: [{ senderId: paused.id, senderName: 'Paused', country: null, effectiveStatus: 'inactive' }] },
      { key: 'sender_without_price', severity: 'info', count: 1, rows: [{ senderId: expect.any(String), senderName: 'Free', country: 'IE', effectiveStatus: 'active' }] },
    ]);
    expect((await read(t, '/channel/rcs')).report.warnings).toEqual([]);
  });

  it('follows every change at once: sender paused, legal profile back to pending, last contact deleted, funds spent', async () => {
    const t = await seedTenancy(db);
    await organization(t, { prepaid: true, funds: 1 });
    await legal(t, 'verified');
    const id = await contact(t);
    const s = await sender(t, 'sms', 'SHOP', 'active', [{ country: 'FR' }]);
    expect((await read(t)).report.operational).toBe(true);

    await db.getRepository(SenderEntity).update(s.id, { status: 'inactive' });
    expect(steps((await read(t)).report).channels).toBe(false);
    expect((await read(t, '/channel/sms')).report.reach).toEqual({ reachableCountries: [], senders: {} });
    await db.getRepository(SenderEntity).update(s.id, { status: 'active' });
    await legal(t, 'pending');
    expect(steps((await read(t)).report).legal_profile).toBe(false);
    await legal(t, 'verified');
    await db.query(`DELETE FROM audience_contacts WHERE project_id = $1 AND id = $2`, [t.project.id, id]);
    expect(steps((await read(t)).report).import).toBe(false);
    await db.query(`UPDATE organizations SET funds = funds - 1 WHERE id = $1`, [t.organization.id]);
    expect((await read(t)).report.operational).toBe(false);
  });

  it('one consistent snapshot: a report never mixes the states of a change made in one transaction', async () => {
    const t = await seedTenancy(db);
    const a = await sender(t, 'sms', 'A', 'active', [{ country: 'FR' }]);
    const b = await sender(t, 'sms', 'B', 'inactive', [{ country: 'BE' }]);
    // A writer swaps which of the two is active, one transaction per swap; every report must
    // see exactly one active sender (a mix of before and after would show zero or two).
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        await db.transaction(async (em) => {
          await em.update(SenderEntity, a.id, { status: i % 2 ? 'active' : 'inactive' });
          await em.update(SenderEntity, b.id, { status: i % 2 ? 'inactive' : 'active' });
        });
      }
    })();
    const seen = new Set<string>();
    for (let i = 0; i < 60; i++) {
      const reach = (await read(t, '/channel/sms')).report.reach;
      expect(Object.keys(reach.senders)).toHaveLength(1);
      seen.add(Object.keys(reach.senders)[0]);
    }
    writing = false;
    await writer;
    expect(seen.size).toBeGreaterThan(0);
  });

  it('another project or organization is never read: a path that disagrees with the principal is 404', async () => {
    const t = await seedTenancy(db);
    const other = await seedTenancy(db);
    await sender(other, 'sms', 'OTHER', 'active', [{ country: 'FR' }]);
    const url = `/v1/project/${other.project.uid}/readiness`;
    const res = await fetch(`${base}${url}`, { headers: principalHeader(t, {}, { app: 'readiness', url }) });
    expect(res.status).toBe(404);
    expect(steps((await read(t)).report).channels).toBe(false);
  });

  it('the same report in every data mode: it holds no contact data, only whether a contact exists (ADR 0131)', async () => {
    const t = await seedTenancy(db);
    await contact(t);
    await sender(t, 'sms', 'SHOP', 'active', [{ country: 'FR', effectiveStatus: 'pending' }]);
    const normal = (await read(t, '/channel/sms')).report;
    for (const dataMode of ['anonymized', 'blocked'] as const) {
      for (const path of ['', '/channel/sms']) {
        const url = `/v1/project/${t.project.uid}/readiness${path}`;
        const principal = { kind: 'product' as const, tokenId: randomUUID(), organizationId: t.organization.id, plan: 'm' as const, scopes: [], project: { id: t.project.id, uid: t.project.uid, dataMode }, dataSourceId: null };
        const res = await fetch(`${base}${url}`, { headers: signedPrincipal(principal, { app: 'readiness', url }) });
        const body = (await res.json()) as Json;
        expect([dataMode, path, res.status]).toEqual([dataMode, path, 200]);
        if (path) expect(body.entity).toEqual(normal);
        else expect(steps(body.entity).import).toBe(true);
      }
    }
  });

  it('refuses a request without the gateway principal', async () => {
    const t = await seedTenancy(db);
    expect((await fetch(`${base}/v1/project/${t.project.uid}/readiness`)).status).toBe(401);
  });
});
