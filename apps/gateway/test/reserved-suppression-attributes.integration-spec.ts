import { CHANNELS, RESERVED_ATTRIBUTES, suppressionAttribute } from '@meld/contracts';
import { migrations } from '@meld/db';
import { seedTenancy } from '@meld/fixtures';
import type { DataSource, MigrationInterface } from 'typeorm';
import { openTestDb } from './support/tenancy';

/**
 * `_suppressed_<channel>` (ADR 0361) is seeded into new projects with the other reserved
 * attributes, and its migration adds it to the projects created before, each with a `num` slot,
 * once (a rerun adds nothing). The migration runs in a transaction rolled back at the end.
 */
describe('reserved suppression attributes', () => {
  let db: DataSource;
  beforeAll(async () => {
    db = await openTestDb();
  });
  afterAll(() => db?.destroy());

  const UIDS = CHANNELS.map(suppressionAttribute);
  const read = (runner: { query: DataSource['query'] }, projectId: string) =>
    runner.query(`SELECT uid, type, multivalue, enabled, visible, internal, "unique", reserved, slot FROM attributes WHERE project_id = $1 AND uid = ANY($2) ORDER BY uid`, [projectId, UIDS]);

  it('a new project has them; the migration gives them to an older project, with a num slot each, once', async () => {
    const { project } = await seedTenancy(db, 'suppression-catalogue');
    const seeded = await read(db, project.id);
    expect(seeded.map((a: { uid: string }) => a.uid).sort()).toEqual([...UIDS].sort());
    const Migration = migrations.find((m) => m.name === 'ReservedSuppressionAttributes1795269880000') as (new () => MigrationInterface) | undefined;
    expect(Migration).toBeDefined();
    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      // The project as created before the attributes were reserved.
      await runner.query(`DELETE FROM attributes WHERE project_id = $1 AND uid = ANY($2)`, [project.id, UIDS]);
      const [{ n: before }] = await runner.query(`SELECT count(*)::int AS n FROM attributes WHERE project_id = $1`, [project.id]);
      expect(before).toBe(RESERVED_ATTRIBUTES.length - UIDS.length + 2);
      await new Migration!().up(runner);
      await new Migration!().up(runner);
      const added = await read(runner, project.id);
      expect(added.map(({ slot: _, ...a }: { slot: number }) => a)).toEqual(
        [...UIDS].sort().map((uid) => ({ uid, type: 'boolean', multivalue: false, enabled: true, visible: true, internal: true, unique: false, reserved: true })),
      );
      const slots = added.map((a: { slot: number | null }) => a.slot);
      expect(slots.every((s: number | null) => typeof s === 'number')).toBe(true);
      expect(new Set(slots).size).toBe(UIDS.length);
      // Their catalogue entries say what the seeded ones say.
      expect(added.map(({ slot: _, ...a }: { slot: number }) => a)).toEqual(seeded.map(({ slot: _, ...a }: { slot: number }) => a));
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });
});
