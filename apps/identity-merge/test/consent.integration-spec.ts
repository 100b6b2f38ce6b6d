import { randomUUID } from 'node:crypto';
import { audienceChange, type AudienceChange } from '@meld/contracts';
import { DataSourceEntity } from '@meld/db';
import { seedTenancy } from '@meld/fixtures';
import type { DataSource } from 'typeorm';
import { MergeRepository } from '../src/merge/merge.repository';
import { MergeContactsCommand } from '../src/merge/usecases/merge-contacts/merge-contacts.command';
import { MergeContacts } from '../src/merge/usecases/merge-contacts/merge-contacts.usecase';
import { ownDatabase } from './app.fixture';

/** Consent history and absorbed-id tombstones of the merge step, on the real Postgres. */
describe('identity merge: consent and tombstones', () => {
  const store = ownDatabase('identity_merge_consent');
  let db: DataSource;
  let merge: MergeContacts;
  beforeAll(() => {
    db = store.db();
    merge = new MergeContacts(new MergeRepository(db));
  });

  /** A project merging on `_email` with the ingest source (`api`) and a CRM of higher priority. */
  async function tenancy() {
    const { project, dataSource } = await seedTenancy(db, 'consent');
    const crm = await db.getRepository(DataSourceEntity).save({ projectId: project.id, uid: `crm-${randomUUID().slice(0, 8)}`, name: 'CRM', connector: 'crm', priority: 10 });
    return { projectId: project.id, api: dataSource.id, crm: crm.id };
  }

  /** The source contact's whole state as ingest would leave it (every attribute written at `at`), then the merge step. */
  async function put(projectId: string, dataSourceId: string, userId: string, attributes: Record<string, string>, at: string) {
    await db.query(
      `INSERT INTO source_contacts (project_id, data_source_id, user_id, attributes, attribute_at, version) VALUES ($1, $2, $3, $4, $5, 1)
       ON CONFLICT (project_id, data_source_id, user_id) DO UPDATE SET attributes = EXCLUDED.attributes, attribute_at = EXCLUDED.attribute_at, version = source_contacts.version + 1`,
      [projectId, dataSourceId, userId, JSON.stringify(attributes), JSON.stringify(Object.fromEntries(Object.keys(attributes).map((k) => [k, at])))],
    );
    await merge.execute(MergeContactsCommand.forContact({ projectId, dataSourceId, userId }));
    const [row]: Array<{ audience_id: string }> = await db.query(`SELECT audience_id FROM audience_members WHERE project_id = $1 AND data_source_id = $2 AND user_id = $3`, [
      projectId,
      dataSourceId,
      userId,
    ]);
    return row.audience_id;
  }

  interface HistoryRow {
    audience_id: string;
    channel: string;
    status: string | null;
    previous: string | null;
    source: string;
    source_at: string | null;
    changed_at: string;
  }
  const history = async (projectId: string): Promise<HistoryRow[]> =>
    (
      await db.query(
        `SELECT audience_id, channel, status, previous, source, source_at, changed_at FROM consent_changes WHERE project_id = $1 ORDER BY id`,
        [projectId],
      )
    ).map((r: { source_at: Date | null; changed_at: Date }) => ({ ...r, source_at: r.source_at?.toISOString() ?? null, changed_at: r.changed_at.toISOString() }));

  const attributesOf = async (projectId: string, audienceId: string) =>
    (await db.query(`SELECT attributes, lineage FROM audience_contacts WHERE project_id = $1 AND id = $2`, [projectId, audienceId]))[0];

  async function outbox(projectId: string): Promise<AudienceChange[]> {
    const rows: Array<{ value: unknown }> = await db.query(`SELECT value FROM audience_outbox WHERE value->>'projectId' = $1 ORDER BY id`, [projectId]);
    return rows.map((r) => audienceChange.parse(r.value));
  }

  it('records each change of the merged consent per channel, with its source and times', async () => {
    const p = await tenancy();
    const t1 = '2026-11-20T09:00:00.000Z';
    const t2 = '2026-11-20T09:30:00.000Z';
    const a = await put(p.projectId, p.api, 'ann', { _email: 'ann@x.com', _consent_sms: 'opt-in', _consent_email: 'opt-in' }, t1);
    // Same consent, another attribute changed: no history row.
    await put(p.projectId, p.api, 'ann', { _email: 'ann@x.com', _first_name: 'Ann', _consent_sms: 'opt-in', _consent_email: 'opt-in' }, t1);
    // SMS opt-out, email cleared.
    await put(p.projectId, p.api, 'ann', { _email: 'ann@x.com', _consent_sms: 'opt-out' }, t2);
    const rows = await history(p.projectId);
    const source = `datasource:${p.api}`;
    expect(rows.map(({ changed_at: _, ...r }) => r)).toEqual([
      { audience_id: a, channel: 'sms', status: 'opt-in', previous: null, source, source_at: t1 },
      { audience_id: a, channel: 'email', status: 'opt-in', previous: null, source, source_at: t1 },
      { audience_id: a, channel: 'sms', status: 'opt-out', previous: 'opt-in', source, source_at: t2 },
      { audience_id: a, channel: 'email', status: null, previous: 'opt-in', source, source_at: null },
    ]);
    expect(rows[2].changed_at >= rows[0].changed_at).toBe(true);
  });

  it('keeps an opt-out over an opt-in of a higher-priority source when contacts merge, and tombstones the absorbed id', async () => {
    const p = await tenancy();
    const t = '2026-11-20T10:00:00.000Z';
    const fromCrm = await put(p.projectId, p.crm, 'c1', { _email: 'bob@x.com', _consent_sms: 'opt-out', _consent_whatsapp: 'opt-in' }, t);
    const fromApi = await put(p.projectId, p.api, 'b1', { _email: 'bob@y.com', _consent_sms: 'opt-in' }, t);
    expect(fromApi).not.toBe(fromCrm);
    const versionOfApi = (await outbox(p.projectId)).filter((m) => m.audienceId === fromApi).at(-1)!.version;
    // The bridge: the api contact now shares the CRM contact's email (the api source wins collisions).
    const merged = await put(p.projectId, p.api, 'b1', { _email: 'bob@x.com', _consent_sms: 'opt-in' }, t);
    expect(merged).toBe(fromCrm);
    const { attributes, lineage } = await attributesOf(p.projectId, merged);
    expect(attributes).toMatchObject({ _consent_sms: 'opt-out', _consent_whatsapp: 'opt-in' });
    expect(lineage._consent_sms).toBe(p.crm);

    const step = (await outbox(p.projectId)).slice(-3);
    expect(step.map((m) => [m.kind, m.audienceId])).toEqual([
      ['tombstone', fromApi],
      ['snapshot', merged],
      ['merge', merged],
    ]);
    expect(step[0].version).toBe(versionOfApi + 1);
    expect(new Set(step.map((m) => m.at)).size).toBe(1);

    // The survivor's consent did not change (the CRM opt-out was already its value): no history for it in this step.
    const rows = await history(p.projectId);
    expect(rows.filter((r) => r.audience_id === merged).map((r) => `${r.channel}:${r.status}`)).toEqual([
      'sms:opt-out',
      'whatsapp:opt-in',
    ]);
  });

  it('stamps a step with the database clock, later steps never earlier', async () => {
    const p = await tenancy();
    await put(p.projectId, p.api, 'x', { _email: 'x@x.com' }, '2026-11-20T10:00:00.000Z');
    await put(p.projectId, p.api, 'x', { _email: 'x@x.com', _first_name: 'X' }, '2026-11-20T10:00:00.000Z');
    const [first, second] = (await outbox(p.projectId)).map((m) => Date.parse(m.at));
    const [{ now }]: Array<{ now: Date }> = await db.query(`SELECT clock_timestamp() AS now`);
    expect(second).toBeGreaterThanOrEqual(first);
    expect(now.getTime()).toBeGreaterThanOrEqual(second);
  });
});
