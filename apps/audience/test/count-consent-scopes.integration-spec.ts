import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import { defaultGeneralConfig } from '@meld/contracts';
import { AudienceSnapshotFixture, type Json, seedTenancy, signedPrincipal, startAppUnderTest } from '@meld/fixtures';
import { migratedTestClickHouse } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { appDefinition } from '../src/app.definition';
import { CountModule } from '../src/count/count.module';
import { FilterCatalogueRepository } from '../src/count/filter-catalogue.repository';
import { CountAudienceUseCase } from '../src/count/usecases/count-audience/count-audience.usecase';

/**
 * The count's compliance filters and figures read consent through the project's marketing scopes
 * (ADR 0347): the same four contacts in projects that differ only by their generalConfig scopes.
 */
describe('audience count: marketing consent scopes (ADR 0347)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  type Project = Awaited<ReturnType<typeof seedTenancy>>;
  const projects: Record<'perChannel' | 'smsOptOutEverywhere' | 'emailOptInEverywhere' | 'both', Project> = {} as never;

  const ALL = ['rcs', 'sms', 'whatsapp', 'email'];
  /** a: opted out of sms; b: opted in to email; c: both; d: no statement. Every one has a mobile and an email. */
  const CONTACTS: Array<Record<string, string>> = [{ _consent_sms: 'opt-out' }, { _consent_email: 'opt-in' }, { _consent_email: 'opt-in', _consent_sms: 'opt-out' }, {}];

  beforeAll(async () => {
    ch = await migratedTestClickHouse();
    ({ app, base, db } = await startAppUnderTest(appDefinition));
    const scoped = async (blocks: Record<string, Record<string, string>>) => {
      const tenancy = await seedTenancy(db, 'scopes');
      const config: Record<string, object> = { ...defaultGeneralConfig() };
      for (const [block, fields] of Object.entries(blocks)) config[block] = { ...config[block], ...fields };
      await db.query(`UPDATE projects SET general_config = $2 WHERE id = $1`, [tenancy.project.id, JSON.stringify(config)]);
      const rows = CONTACTS.map((str) => ({ project_id: tenancy.project.id, audience_id: randomUUID(), version: '1', deleted: 0, str_keys: Object.keys(str), str_values: Object.values(str), num_keys: [], num_values: [], channels: ALL, updated_at: Math.floor(Date.now() / 1000) }));
      await new AudienceSnapshotFixture(ch, db).write(rows);
      return tenancy;
    };
    projects.perChannel = await scoped({});
    projects.smsOptOutEverywhere = await scoped({ channelSms: { marketingOptOutScope: 'all_channels' } });
    projects.emailOptInEverywhere = await scoped({ channelEmail: { marketingOptInScope: 'all_channels' } });
    // channelDefaults belongs to no channel: its scopes change nothing.
    projects.both = await scoped({ channelSms: { marketingOptOutScope: 'all_channels' }, channelEmail: { marketingOptInScope: 'all_channels' }, channelDefaults: { marketingOptOutScope: 'all_channels' } });
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  const count = async (t: Project, filterCompliance: Record<string, string>): Promise<Json> => {
    const url = `${base}/v1/project/${t.project.uid}/audience/count`;
    const headers = signedPrincipal(
      { kind: 'product', tokenId: randomUUID(), organizationId: t.organization.id, plan: 'm', scopes: ['PROJECT_AUDIENCE_READ'], project: { id: t.project.id, uid: t.project.uid, dataMode: 'normal' }, dataSourceId: null },
      { app: 'audience', method: 'POST', url },
    );
    const res = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ filterCompliance }) });
    expect(res.status).toBe(200);
    return ((await res.json()) as Json).metadata;
  };
  const figures = (mode: string, reachable: number, optedIn: number, optedOut: number, noConsent: number) => ({ mode, reachable, optedIn, optedOut, noConsent, suppressed: 0, noValidAddress: 0 });

  it('per_channel (the default): an sms opt-out leaves the contact reachable on email', async () => {
    expect(await count(projects.perChannel, { email: 'opt-out' })).toEqual({ totalHits: 4, compliance: { email: figures('opt-out', 4, 2, 0, 2) } });
    expect(await count(projects.perChannel, { sms: 'opt-in' })).toEqual({ totalHits: 0, compliance: { sms: figures('opt-in', 0, 0, 2, 2) } });
  });

  it("sms marketingOptOutScope all_channels: an sms opt-out is an opt-out on email too, over the contact's email opt-in", async () => {
    expect(await count(projects.smsOptOutEverywhere, { email: 'opt-out' })).toEqual({ totalHits: 2, compliance: { email: figures('opt-out', 2, 1, 2, 1) } });
    expect(await count(projects.smsOptOutEverywhere, { email: 'opt-in' })).toEqual({ totalHits: 1, compliance: { email: figures('opt-in', 1, 1, 2, 1) } });
    // sms itself is as per channel.
    expect(await count(projects.smsOptOutEverywhere, { sms: 'opt-out' })).toEqual({ totalHits: 2, compliance: { sms: figures('opt-out', 2, 0, 2, 2) } });
  });

  it("email marketingOptInScope all_channels: an email opt-in counts on sms and whatsapp, except where the channel's own opt-out wins", async () => {
    expect(await count(projects.emailOptInEverywhere, { sms: 'opt-in' })).toEqual({ totalHits: 1, compliance: { sms: figures('opt-in', 1, 1, 2, 1) } });
    // c's sms opt-out stays on sms (sms's opt-out scope is per_channel): on whatsapp both email opt-ins count.
    expect(await count(projects.emailOptInEverywhere, { whatsapp: 'opt-in' })).toEqual({ totalHits: 2, compliance: { whatsapp: figures('opt-in', 2, 2, 0, 2) } });
  });

  it('both widened: the sms opt-out wins over the email opt-in on every channel; totalHits ANDs the channels', async () => {
    expect(await count(projects.both, { whatsapp: 'opt-in', email: 'opt-out' })).toEqual({
      totalHits: 1,
      compliance: { whatsapp: figures('opt-in', 1, 1, 2, 1), email: figures('opt-out', 2, 1, 2, 1) },
    });
  });

  it('answers alike from the key/value arrays, for consents without a slot column', async () => {
    const useCase = app.select(CountModule).get(CountAudienceUseCase);
    const repository = app.select(CountModule).get(FilterCatalogueRepository);
    for (const t of Object.values(projects)) {
      const catalogue = await repository.catalogue(t.project.id);
      const unslotted = { ...catalogue, attributes: catalogue.attributes.map((a) => ({ ...a, slot: null })) };
      for (const filterCompliance of [{ email: 'opt-out' }, { sms: 'opt-in', whatsapp: 'opt-out' }, { whatsapp: 'opt-in', rcs: 'opt-out' }] as Array<Record<string, string>>) {
        const slotted = await useCase.execute({ projectId: t.project.id, filterCompliance, catalogue });
        expect(await useCase.execute({ projectId: t.project.id, filterCompliance, catalogue: unslotted })).toEqual(slotted);
      }
    }
  });
});
