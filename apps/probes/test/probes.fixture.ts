import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { ClickHouse } from '@meld/clickhouse';
import { APPS, type DataMode, type Plan, type Scope } from '@meld/contracts';
import { AttributeEntity } from '@meld/db';
import { type ContactState, contactRow, signedPrincipal, startAppUnderTest, withSlotColumns } from '@meld/fixtures';
import type { MeldAppDefinition } from '@meld/platform';
import { migratedTestClickHouse } from '@meld/testing';
import type { DataSource } from 'typeorm';
import { CoverageModule } from '../src/coverage/coverage.module';
import { AudienceSnapshotWriter } from '../src/sinks/audience-snapshot.writer';
import { RetentionModule } from '../src/retention/retention.module';
import { VolumesModule } from '../src/volumes/volumes.module';

/** The probes app's request side only (no sinks, so no Kafka consumer), in-process on the test stores. */
const probesApi: MeldAppDefinition = { name: 'probes', port: APPS['probes'].port, stores: ['postgres', 'clickhouse', 'redis'], imports: [CoverageModule, VolumesModule, RetentionModule] };

export async function startProbes(overrides: Record<string, string> = {}) {
  const ch = await migratedTestClickHouse();
  const started = await startAppUnderTest(probesApi, overrides);
  return { ...started, ch };
}

export type Contact = ContactState;
export { contactRow };

/** Contacts into audience_contacts and its collapsing twin, as the probes audience sink writes them (ADR 0223). */
export async function insertContacts(ch: ClickHouse, db: DataSource, projectId: string, contacts: ReadonlyArray<readonly [string, Contact]>) {
  for (let i = 0; i < contacts.length; i += 10_000) {
    const rows = await withSlotColumns(db, contacts.slice(i, i + 10_000).map(([id, c]) => contactRow(projectId, id, c)));
    await Promise.all([ch.insert('audience_contacts', rows), new AudienceSnapshotWriter(ch).write(rows)]);
  }
}

export async function addAttributes(db: DataSource, projectId: string, attributes: Array<Partial<AttributeEntity> & { uid: string; type: AttributeEntity['type'] }>) {
  await db.getRepository(AttributeEntity).insert(attributes.map((a) => ({ label: a.uid, ...a, projectId })));
}

/** Headers of a probe call (coverage unless `surface` says otherwise) by this tenancy's caller, signed for that request (ADR 0102). */
export function probeHeaders(
  t: { organization: { id: string }; project: { id: string; uid: string } },
  { scopes = ['PROJECT_AUDIENCE_READ'] as Scope[], dataMode = 'normal' as DataMode, plan = 'm' as Plan | null, surface = 'audience/coverage' } = {},
) {
  return {
    'content-type': 'application/json',
    ...signedPrincipal(
      { kind: 'product', tokenId: randomUUID(), organizationId: t.organization.id, plan, scopes, project: { id: t.project.id, uid: t.project.uid, dataMode }, dataSourceId: null },
      { app: 'probes', method: 'POST', url: `/v1/project/${t.project.uid}/${surface}` },
    ),
  };
}

/** The seed generator's PRNG (mulberry32): seeded audiences give the same figures on every run. */
export const prng: (seed: number) => () => number = require(join(__dirname, '../../../tools/seed/generator.js')).rng;

/** A current membership row: the source contact `userId` of `dataSourceId` belongs to `audienceId`. */
export const memberRow = (projectId: string, dataSourceId: string, userId: string, audienceId: string) => ({ project_id: projectId, data_source_id: dataSourceId, user_id: userId, audience_id: audienceId, version: '1', deleted: 0 });

/** An events row as the probes events sink writes it (parameters JSON-encoded, sorted by name). */
export function eventRow(projectId: string, dataSourceId: string, userId: string, type: string, date: Date, parameters: Record<string, unknown> = {}, eventId: string = randomUUID()) {
  const keys = Object.keys(parameters).sort();
  const unix = Math.floor(date.getTime() / 1000);
  return { project_id: projectId, data_source_id: dataSourceId, user_id: userId, event_id: eventId, event_type: type, event_date: unix, received_at: unix, param_keys: keys, param_values: keys.map((k) => JSON.stringify(parameters[k])) };
}
