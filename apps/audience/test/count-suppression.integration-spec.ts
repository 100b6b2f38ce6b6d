import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import { AudienceSnapshotFixture, type Json, seedTenancy, signedPrincipal, startAppUnderTest } from '@meld/fixtures';
import { migratedTestClickHouse } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { appDefinition } from '../src/app.definition';
import { CountModule } from '../src/count/count.module';
import { FilterCatalogueRepository } from '../src/count/filter-catalogue.repository';
import { CountAudienceUseCase } from '../src/count/usecases/count-audience/count-audience.usecase';

/**
 * The count's `basic` filter excludes contacts suppressed on the channel (merged
 * `_suppressed_<channel>` true, ADR 0361), so `opt-in` and `opt-out` do too; the breakdown
 * counts them as `suppressed` (with an address), and its five figures still add up to the root.
 * Over audience_snapshot rows as the probes sink writes them (a boolean is 1 / 0 in the num
 * arrays and in its slot column).
 */
describe('audience count: suppression (ADR 0361)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  let tenancy: Awaited<ReturnType<typeof seedTenancy>>;
  const ALL = ['email', 'rcs', 'sms', 'whatsapp'];

  beforeAll(async () => {
    ch = await migratedTestClickHouse();
    ({ app, base, db } = await startAppUnderTest(appDefinition));
    tenancy = await seedTenancy(db, 'suppression');
    // The reserved attribute, with its slot column (a project seeded before it was reserved has it from the migration).
    await db.query(
      `INSERT INTO attributes (project_id, uid, label, type, internal, reserved) SELECT $1, '_suppressed_sms', 'SMS suppressed', 'boolean', true, true
        WHERE NOT EXISTS (SELECT 1 FROM attributes WHERE project_id = $1 AND uid = '_suppressed_sms')`,
      [tenancy.project.id],
    );
    const row = (str: Record<string, string>, num: Record<string, number>, channels: string[]) => ({
      project_id: tenancy.project.id,
      audience_id: randomUUID(),
      version: '1',
      deleted: 0,
      str_keys: Object.keys(str),
      str_values: Object.values(str),
      num_keys: Object.keys(num),
      num_values: Object.values(num),
      channels,
      updated_at: Math.floor(Date.now() / 1000),
    });
    await new AudienceSnapshotFixture(ch, db).write([
      // a: opted in, suppressed on sms (reachable by email still).
      row({ _consent_sms: 'opt-in' }, { _suppressed_sms: 1 }, ALL),
      // b: opted in.
      row({ _consent_sms: 'opt-in' }, {}, ALL),
      // c: opted out and suppressed: suppressed, not opted out.
      row({ _consent_sms: 'opt-out' }, { _suppressed_sms: 1 }, ALL),
      // d: no statement; a suppression lifted to false (not true: not suppressed).
      row({}, { _suppressed_sms: 0 }, ALL),
      // e: suppressed but no address: no valid address, not suppressed.
      row({}, { _suppressed_sms: 1 }, []),
      // f: suppressed on another channel only.
      row({ _consent_sms: 'opt-in' }, { _suppressed_email: 1 }, ALL),
    ]);
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  const count = async (filterCompliance: Record<string, string>): Promise<Json> => {
    const url = `${base}/v1/project/${tenancy.project.uid}/audience/count`;
    const headers = signedPrincipal(
      { kind: 'product', tokenId: randomUUID(), organizationId: tenancy.organization.id, plan: 'm', scopes: ['PROJECT_AUDIENCE_READ'], project: { id: tenancy.project.id, uid: tenancy.project.uid, dataMode: 'normal' }, dataSourceId: null },
      { app: 'audience', method: 'POST', url },
    );
    const res = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ filterCompliance }) });
    expect(res.status).toBe(200);
    return ((await res.json()) as Json).metadata;
  };
  const sms = { optedIn: 2, optedOut: 0, noConsent: 1, suppressed: 2, noValidAddress: 1 };

  it('basic, opt-out and opt-in on sms exclude the suppressed; the breakdown shows them and adds up to the root', async () => {
    expect(await count({ sms: 'basic' })).toEqual({ totalHits: 3, compliance: { sms: { mode: 'basic', reachable: 3, ...sms } } });
    expect(await count({ sms: 'opt-out' })).toEqual({ totalHits: 3, compliance: { sms: { mode: 'opt-out', reachable: 3, ...sms } } });
    expect(await count({ sms: 'opt-in' })).toEqual({ totalHits: 2, compliance: { sms: { mode: 'opt-in', reachable: 2, ...sms } } });
    expect(Object.values(sms).reduce((a, b) => a + b)).toBe(6);
  });

  it('a suppression holds on its own channel only', async () => {
    expect(await count({ email: 'basic', sms: 'basic' })).toEqual({
      totalHits: 2,
      compliance: { email: { mode: 'basic', reachable: 4, optedIn: 0, optedOut: 0, noConsent: 4, suppressed: 1, noValidAddress: 1 }, sms: { mode: 'basic', reachable: 3, ...sms } },
    });
  });

  it('answers alike from the key/value arrays, for a suppression without a slot column', async () => {
    const useCase = app.select(CountModule).get(CountAudienceUseCase);
    const catalogue = await app.select(CountModule).get(FilterCatalogueRepository).catalogue(tenancy.project.id);
    expect(catalogue.attributes.find((a) => a.uid === '_suppressed_sms')?.slot).toEqual(expect.any(Number));
    const unslotted = { ...catalogue, attributes: catalogue.attributes.map((a) => ({ ...a, slot: null })) };
    for (const filterCompliance of [{ sms: 'basic' }, { sms: 'opt-in', email: 'opt-out' }] as Array<Record<string, string>>) {
      const slotted = await useCase.execute({ projectId: tenancy.project.id, filterCompliance, catalogue });
      expect(await useCase.execute({ projectId: tenancy.project.id, filterCompliance, catalogue: unslotted })).toEqual(slotted);
    }
  });
});
