import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import { type DataMode, type Scope } from '@meld/contracts';
import { AttributeEntity } from '@meld/db';
import { AudienceSnapshotFixture, seedTenancy, signedPrincipal, startAppUnderTest, type Json } from '@meld/fixtures';
import { migratedTestClickHouse } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { appDefinition } from '../src/app.definition';
import { AudienceCountSchema } from '../src/count/count.schema';
import { CountModule } from '../src/count/count.module';
import { FilterCatalogueRepository } from '../src/count/filter-catalogue.repository';
import { CountAudienceUseCase } from '../src/count/usecases/count-audience/count-audience.usecase';

/**
 * POST /v1/project/:project/audience/count on the audience app, over audience_snapshot rows
 * written as the probes sink writes them (apps/probes/src/sinks/audience-contact-row.ts, with
 * the slot columns of the project's attributes; its tests cover the sink itself).
 */
describe('audience count', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  let tenancy: Awaited<ReturnType<typeof seedTenancy>>;

  type Contact = { str?: Record<string, string>; num?: Record<string, number>; channels?: string[]; version?: number; deleted?: 0 | 1 };
  /** A state of a contact in the sink's encoding. */
  const row = (audienceId: string, c: Contact) => ({
    project_id: tenancy.project.id,
    audience_id: audienceId,
    version: String(c.version ?? 1),
    deleted: c.deleted ?? 0,
    str_keys: Object.keys(c.str ?? {}),
    str_values: Object.values(c.str ?? {}),
    num_keys: Object.keys(c.num ?? {}),
    num_values: Object.values(c.num ?? {}),
    channels: c.channels ?? [],
    updated_at: Math.floor(Date.now() / 1000),
  });
  const PHONE = ['rcs', 'sms', 'whatsapp'];

  beforeAll(async () => {
    ch = await migratedTestClickHouse();
    ({ app, base, db } = await startAppUnderTest(appDefinition));
    tenancy = await seedTenancy(db, 'count');
    await db.getRepository(AttributeEntity).insert({ projectId: tenancy.project.id, uid: 'vip', label: 'VIP', type: 'boolean' });
    const [c6, c7] = [randomUUID(), randomUUID()];
    // Gold: c1 c2 c4 c5 c8 (c6 was deleted, c7 moved to silver). Hand-counted figures below.
    const snapshot = new AudienceSnapshotFixture(ch, db);
    const insert = (rows: Array<ReturnType<typeof row>>) => snapshot.write(rows);
    await insert([
      row(randomUUID(), { str: { loyalty_tier: 'gold', _email: 'c1@x.com', _consent_sms: 'opt-in', _consent_email: 'opt-out' }, num: { vip: 1 }, channels: [...PHONE, 'email'] }),
      row(randomUUID(), { str: { loyalty_tier: 'gold', _consent_sms: 'opt-out' }, channels: PHONE }),
      row(randomUUID(), { str: { loyalty_tier: 'silver' }, channels: PHONE }),
      row(randomUUID(), { str: { loyalty_tier: 'gold', _consent_email: 'opt-in', _consent_sms: 'opt-in' }, channels: ['email'] }),
      row(randomUUID(), { str: { loyalty_tier: 'gold' } }),
      row(c6, { str: { loyalty_tier: 'gold', _consent_sms: 'opt-in' }, channels: PHONE, version: 1 }),
      row(c7, { str: { loyalty_tier: 'gold' }, channels: PHONE, version: 1 }),
      // Legacy consent value: no statement.
      row(randomUUID(), { str: { loyalty_tier: 'gold', _consent_sms: 'yes' }, channels: PHONE }),
    ]);
    // Newer versions in a separate insert (another part): reads must take the newest.
    await insert([row(c6, { version: 2, deleted: 1 }), row(c7, { str: { loyalty_tier: 'silver' }, version: 2 })]);
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  const url = () => `${base}/v1/project/${tenancy.project.uid}/audience/count`;
  const headers = ({ scopes = ['PROJECT_AUDIENCE_READ'] as Scope[], dataMode = 'normal' as DataMode } = {}) => ({
    'content-type': 'application/json',
    ...signedPrincipal(
      { kind: 'product', tokenId: randomUUID(), organizationId: tenancy.organization.id, plan: 'm', scopes, project: { id: tenancy.project.id, uid: tenancy.project.uid, dataMode }, dataSourceId: null },
      { app: 'audience', method: 'POST', url: url() },
    ),
  });
  const count = async (body: unknown, opts: Parameters<typeof headers>[0] = {}): Promise<{ status: number; body: Json }> => {
    const res = await fetch(url(), { method: 'POST', headers: headers(opts), body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };
  const gold = { type: 'attribute_condition', key: 'loyalty_tier', operator: 'matches-string', values: ['GOLD'] };
  const ok = async (body: unknown) => {
    const res = await count(body);
    expect(res.status).toBe(200);
    return AudienceCountSchema.parse(res.body).metadata;
  };

  it('counts the current audience without a filter, deleted and superseded versions excluded', async () => {
    expect(await ok({})).toEqual({ totalHits: 7 });
    expect(await ok({ version: '0.0.1', root: { type: 'group', children: [] } })).toEqual({ totalHits: 7 });
  });

  it('counts the contacts matching a root', async () => {
    expect(await ok({ root: gold })).toEqual({ totalHits: 5 });
    expect(await ok({ root: { type: 'group', operator: 'and', children: [gold, { type: 'attribute_condition', key: 'vip', operator: 'is-true', values: [] }] } })).toEqual({ totalHits: 1 });
  });

  it('narrows by each compliance mode and breaks the root audience down per channel', async () => {
    const sms = { optedIn: 1, optedOut: 1, noConsent: 1, suppressed: 0, noValidAddress: 2 };
    expect(await ok({ root: gold, filterCompliance: { sms: 'basic' } })).toEqual({ totalHits: 3, compliance: { sms: { mode: 'basic', reachable: 3, ...sms } } });
    expect(await ok({ root: gold, filterCompliance: { sms: 'opt-out' } })).toEqual({ totalHits: 2, compliance: { sms: { mode: 'opt-out', reachable: 2, ...sms } } });
    expect(await ok({ root: gold, filterCompliance: { sms: 'opt-in' } })).toEqual({ totalHits: 1, compliance: { sms: { mode: 'opt-in', reachable: 1, ...sms } } });
    // Without a root: the whole audience (c3 has a mobile and no consent, c7 no address).
    expect(await ok({ filterCompliance: { sms: 'opt-in' } })).toEqual({
      totalHits: 1,
      compliance: { sms: { mode: 'opt-in', reachable: 1, optedIn: 1, optedOut: 1, noConsent: 2, suppressed: 0, noValidAddress: 3 } },
    });
  });

  it('ANDs several channels in totalHits, each channel described on its own', async () => {
    expect(await ok({ root: gold, filterCompliance: { sms: 'opt-out', email: 'basic' } })).toEqual({
      totalHits: 1,
      compliance: {
        sms: { mode: 'opt-out', reachable: 2, optedIn: 1, optedOut: 1, noConsent: 1, suppressed: 0, noValidAddress: 2 },
        email: { mode: 'basic', reachable: 2, optedIn: 1, optedOut: 1, noConsent: 0, suppressed: 0, noValidAddress: 3 },
      },
    });
    expect(await ok({ root: gold, filterCompliance: { whatsapp: 'opt-in', rcs: 'basic' } })).toMatchObject({ totalHits: 0, compliance: { whatsapp: { reachable: 0 }, rcs: { reachable: 3 } } });
  });

  it("accepts Meld's own SMS event types without a catalogue row (ADR 0157)", async () => {
    const delivered = { type: 'group_event', eventType: '_sms_delivered', timeframe: { lastDays: 30 }, children: [{ type: 'event_condition', key: '_sms_delivered.senderId', operator: 'is-set', values: [] }] };
    expect(await ok({ root: delivered })).toEqual({ totalHits: 0 });
    expect(await ok({ root: { type: 'group', negate: true, children: [{ type: 'group_event', eventType: '_sms_undelivered', children: [] }] } })).toEqual({ totalHits: 7 });
    expect((await count({ root: { ...delivered, eventType: '_sms_clicked' } })).status).toBe(400);
  });

  it('refuses bad bodies naming the field', async () => {
    const bad = async (body: unknown) => {
      const res = await count(body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      return res.body;
    };
    expect((await bad({ rooot: gold })).message).toContain('rooot');
    expect((await bad({ filterCompliance: { fax: 'basic' } })).message).toContain('fax');
    expect((await bad({ filterCompliance: { sms: 'maybe' } })).details.fields).toEqual([expect.objectContaining({ path: 'filterCompliance.sms' })]);
    expect((await bad({ filterCompliance: 'sms' })).details.fields).toEqual([expect.objectContaining({ path: 'filterCompliance' })]);
    expect((await bad({ version: '9.9.9' })).details).toEqual({ path: 'version', allowed: ['0.0.1'] });
  });

  it('refuses a filter naming an unknown attribute or operator with the path of the node', async () => {
    const unknown = await count({ root: { type: 'group', children: [gold, { type: 'attribute_condition', key: 'nope', operator: 'is-set', values: [] }] } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details.path).toBe('root.children[1].key');
    expect(unknown.body.message).toContain('root.children[1].key');
    const operator = await count({ root: { ...gold, operator: 'greater-than', values: [1] } });
    expect(operator.status).toBe(400);
    expect(operator.body.details.path).toBe('root.operator');
    expect(operator.body.details.allowed).toContain('matches-string');
  });

  describe('the filter catalogue (ADR 0232)', () => {
    /** Runs `work` and returns how many catalogue queries it cost (the attributes read is one per catalogue load). */
    const catalogueReads = async (work: () => Promise<unknown>) => {
      const spy = jest.spyOn(db, 'query');
      try {
        await work();
        return spy.mock.calls.filter(([text]) => /FROM attributes WHERE project_id/.test(String(text))).length;
      } finally {
        spy.mockRestore();
      }
    };

    it('the second count reads it from memory', async () => {
      await ok({ root: gold });
      expect(await catalogueReads(() => ok({ root: gold }))).toBe(0);
      expect(await catalogueReads(() => ok({ root: gold, filterCompliance: { sms: 'basic' } }))).toBe(0);
    });

    it('an attribute declared after the catalogue was cached is filterable at once (one reload), an unknown one still 400', async () => {
      await ok({ root: gold });
      const uid = `tier_${randomUUID().slice(0, 8)}`;
      await db.getRepository(AttributeEntity).insert({ projectId: tenancy.project.id, uid, label: 'Tier', type: 'string' });
      const fresh = { type: 'attribute_condition', key: uid, operator: 'is-set', values: [] };
      expect(await catalogueReads(async () => expect(await ok({ root: fresh })).toEqual({ totalHits: 0 }))).toBe(1);
      expect(await catalogueReads(() => ok({ root: fresh }))).toBe(0);
      const unknown = { type: 'attribute_condition', key: 'never_declared', operator: 'is-set', values: [] };
      expect(await catalogueReads(async () => expect((await count({ root: unknown })).status).toBe(400))).toBe(1);
    });
  });

  it('needs the PII right to filter on an email or phone attribute', async () => {
    const byEmail = { root: { type: 'group', children: [gold, { type: 'attribute_condition', key: '_email', operator: 'matches-string', values: ['c1@x.com'] }] } };
    const refused = await count(byEmail);
    expect(refused.status).toBe(403);
    expect(refused.body.details).toEqual({ path: 'root.children[1].key' });
    expect((await count(byEmail, { scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_BASIC'], dataMode: 'anonymized' })).status).toBe(403);
    const allowed = await count(byEmail, { scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_BASIC'] });
    expect(allowed.status).toBe(200);
    expect(allowed.body.metadata.totalHits).toBe(1);
  });

  it('is the use case CountModule exports, for other features', async () => {
    const useCase = app.select(CountModule).get(CountAudienceUseCase);
    await expect(useCase.execute({ projectId: tenancy.project.id, root: gold, filterCompliance: { email: 'opt-in' } })).resolves.toEqual({
      totalHits: 1,
      compliance: { email: { mode: 'opt-in', reachable: 1, optedIn: 1, optedOut: 1, noConsent: 0, suppressed: 0, noValidAddress: 3 } },
    });
  });

  it('answers alike from the key/value arrays, for attributes and consents without a slot column (created before migration 0005)', async () => {
    const useCase = app.select(CountModule).get(CountAudienceUseCase);
    const catalogue = await app.select(CountModule).get(FilterCatalogueRepository).catalogue(tenancy.project.id);
    expect(catalogue.attributes.find((a) => a.uid === '_consent_sms')?.slot).toEqual(expect.any(Number));
    const unslotted = { ...catalogue, attributes: catalogue.attributes.map((a) => ({ ...a, slot: null })) };
    const root = { type: 'group', children: [gold, { type: 'attribute_condition', key: 'vip', operator: 'is-not-set', values: [] }] };
    for (const filterCompliance of [{ sms: 'opt-in' }, { sms: 'opt-out', email: 'opt-in' }, { whatsapp: 'basic' }] as Array<Record<string, string>>) {
      const slotted = await useCase.execute({ projectId: tenancy.project.id, root, filterCompliance, catalogue });
      expect(await useCase.execute({ projectId: tenancy.project.id, root, filterCompliance, catalogue: unslotted })).toEqual(slotted);
    }
    expect((await useCase.execute({ projectId: tenancy.project.id, root, filterCompliance: { sms: 'opt-in' }, catalogue: unslotted })).compliance?.sms).toMatchObject({ optedIn: 0, optedOut: 1, noConsent: 1 });
  });

  it("is documented in the app's OpenAPI document", async () => {
    const doc: Json = await (await fetch(`${base}/openapi.json`)).json();
    const op = doc.paths['/v1/project/{project}/audience/count'].post;
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '401', '403', '404', '422', '429', '503']);
    expect(op.requestBody).toBeDefined();
    expect(doc.components.schemas.AudienceCount).toBeDefined();
  });
});
