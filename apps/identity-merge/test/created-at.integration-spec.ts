import { audienceChange, type AudienceChange } from '@meld/contracts';
import type { DataSource } from 'typeorm';
import { MergeRepository } from '../src/merge/merge.repository';
import { MergeContactsCommand } from '../src/merge/usecases/merge-contacts/merge-contacts.command';
import { MergeContacts } from '../src/merge/usecases/merge-contacts/merge-contacts.usecase';
import { mergeProject, ownDatabase } from './app.fixture';

/**
 * `_created_at` of audience contacts that merge and split (ADR 0353), on the real Postgres: the
 * row the contact reads show, and the snapshot that carries it to ClickHouse (`createdAt`).
 * Steps run at given times (t1 < t2 < …), as Postgres' clock would stamp them in order.
 */
describe('identity merge: _created_at across merges and splits', () => {
  const store = ownDatabase('identity_created_at');
  let db: DataSource;
  let merge: MergeContacts;
  beforeAll(() => {
    db = store.db();
    merge = new MergeContacts(new MergeRepository(db));
  });

  const t = (n: number) => new Date(Date.UTC(2026, 10, 20 + n, 9, 0, 0));
  type Project = Awaited<ReturnType<typeof mergeProject>>;

  /** Ingest's write of a contact (the attributes replace the old ones), then its merge step at `at`. */
  async function step(projectId: string, dataSourceId: string, userId: string, attributes: Record<string, string> | null, at: Date) {
    await db.query(
      `INSERT INTO source_contacts (project_id, data_source_id, user_id, attributes, attribute_at, version, deleted_at) VALUES ($1, $2, $3, $4, '{}', 1, $5)
       ON CONFLICT (project_id, data_source_id, user_id) DO UPDATE SET attributes = EXCLUDED.attributes, version = source_contacts.version + 1, deleted_at = EXCLUDED.deleted_at`,
      [projectId, dataSourceId, userId, JSON.stringify(attributes ?? {}), attributes ? null : at],
    );
    await merge.execute(MergeContactsCommand.create(projectId, [{ dataSourceId, userId }], at));
  }

  /** The audience contact of a source contact: its id and `_created_at` (the row the contact reads show). */
  async function contactOf(projectId: string, dataSourceId: string, userId: string): Promise<{ id: string; createdAt: string }> {
    const [row]: Array<{ id: string; created_at: Date }> = await db.query(
      `SELECT c.id, c.created_at FROM audience_members m JOIN audience_contacts c ON c.project_id = m.project_id AND c.id = m.audience_id
        WHERE m.project_id = $1 AND m.data_source_id = $2 AND m.user_id = $3`,
      [projectId, dataSourceId, userId],
    );
    return { id: row.id, createdAt: row.created_at.toISOString() };
  }

  /** The `_created_at` of the last snapshot of an audience contact (what the ClickHouse filters read). */
  async function snapshotCreatedAt(projectId: string, audienceId: string): Promise<string | undefined> {
    const rows: Array<{ value: unknown }> = await db.query(`SELECT value FROM audience_outbox WHERE value->>'projectId' = $1 AND value->>'audienceId' = $2 ORDER BY id`, [projectId, audienceId]);
    const snapshots = rows.map((r) => audienceChange.parse(r.value)).filter((m): m is Extract<AudienceChange, { kind: 'snapshot' }> => m.kind === 'snapshot');
    return snapshots.at(-1)?.createdAt;
  }

  async function expectCreatedAt(p: Project, dataSourceId: string, userId: string, expected: Date) {
    const c = await contactOf(p.id, dataSourceId, userId);
    expect({ row: c.createdAt, snapshot: await snapshotCreatedAt(p.id, c.id) }).toEqual({ row: expected.toISOString(), snapshot: expected.toISOString() });
    return c.id;
  }

  it('A written at t1 and B at t2 from another source, linked by a shared email: the merged contact keeps t1 (A survives)', async () => {
    const p = await mergeProject(db, 'created-at');
    await step(p.id, p.crm, 'a', { _email: 'a@x.com' }, t(1));
    await step(p.id, p.shop, 'b', { _email: 'b@x.com' }, t(2));
    const a = (await contactOf(p.id, p.crm, 'a')).id;
    await step(p.id, p.shop, 'b', { _email: 'A@x.com' }, t(3));
    expect(await expectCreatedAt(p, p.shop, 'b', t(1))).toBe(a);
  });

  it('the merged contact keeps the earliest _created_at also when the younger contact survives', async () => {
    const p = await mergeProject(db, 'created-at');
    await step(p.id, p.crm, 'first', { _email: 'a@x.com' }, t(1)); // A, created t1
    await step(p.id, p.shop, 'b', { _email: 'b@x.com' }, t(2)); // B, created t2
    await step(p.id, p.crm, 'later', { _email: 'a@x.com' }, t(3)); // joins A
    await step(p.id, p.crm, 'first', null, t(4)); // A lives on through `later`, created t1
    const a = await expectCreatedAt(p, p.crm, 'later', t(1));
    const b = (await contactOf(p.id, p.shop, 'b')).id;
    // `b` is older than `later` in the merge's order (ADR 0027), so B keeps its id and absorbs A.
    await step(p.id, p.crm, 'later', { _email: 'b@x.com' }, t(5));
    expect(await expectCreatedAt(p, p.crm, 'later', t(1))).toBe(b);
    expect(await new MergeRepository(db).resolve(p.id, a)).toBe(b);
  });

  it('a source contact that leaves a merged contact starts from its own first merge, not from the split nor from the contact it leaves', async () => {
    const p = await mergeProject(db, 'created-at');
    await step(p.id, p.crm, 'a', { _email: 'a@x.com' }, t(1));
    await step(p.id, p.shop, 'b', { _email: 'b@x.com' }, t(2));
    await step(p.id, p.shop, 'b', { _email: 'a@x.com' }, t(3)); // merged: t1
    await step(p.id, p.shop, 'b', { _email: 'b@x.com' }, t(4)); // split off
    const merged = await expectCreatedAt(p, p.crm, 'a', t(1));
    expect(await expectCreatedAt(p, p.shop, 'b', t(2))).not.toBe(merged);
    // Moving into another contact: that one keeps its own, earlier, time.
    await step(p.id, p.shop, 'b', { _email: 'a@x.com' }, t(5));
    await step(p.id, p.crm, 'c', { _email: 'c@x.com' }, t(6));
    await step(p.id, p.shop, 'b', { _email: 'c@x.com' }, t(7));
    expect((await contactOf(p.id, p.shop, 'b')).id).toBe((await contactOf(p.id, p.crm, 'c')).id);
    await expectCreatedAt(p, p.crm, 'c', t(2));
  });

  it('a member merged before its first merge time was kept counts from the contact it belonged to', async () => {
    const p = await mergeProject(db, 'created-at');
    await step(p.id, p.crm, 'a', { _email: 'a@x.com' }, t(1));
    await step(p.id, p.shop, 'b', { _email: 'a@x.com' }, t(2));
    await db.query(`UPDATE audience_members SET first_at = NULL WHERE project_id = $1`, [p.id]);
    await step(p.id, p.shop, 'b', { _email: 'b@x.com' }, t(3));
    await expectCreatedAt(p, p.shop, 'b', t(1));
    await expectCreatedAt(p, p.crm, 'a', t(1));
  });
});
