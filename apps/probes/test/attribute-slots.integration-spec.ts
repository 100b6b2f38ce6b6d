import { createClickHouse } from '@meld/clickhouse';
import { ATTRIBUTE_SLOTS, slotColumn, slotMaskColumn } from '@meld/contracts';
import { seedTenancy } from '@meld/fixtures';
import { testEnv } from '@meld/testing';
import type { DataSource } from 'typeorm';
import { createDataSource } from '@meld/db';

// attributes.slot (trigger of migration 1795268000000) names a ClickHouse column of migration 0005.
describe('attribute slots', () => {
  let ds: DataSource;
  beforeAll(async () => {
    ds = createDataSource({ url: testEnv().postgresUrl, applicationName: 'attribute-slots-spec' });
    await ds.initialize();
  });
  afterAll(() => ds?.destroy());

  const slots = async (projectId: string): Promise<Record<string, number | null>> =>
    Object.fromEntries((await ds.query(`SELECT uid, slot FROM attributes WHERE project_id = $1`, [projectId])).map((r: { uid: string; slot: number | null }) => [r.uid, r.slot]));
  const insert = (projectId: string, uid: string, type: string, multivalue = false) =>
    ds.query(`INSERT INTO attributes (project_id, uid, label, type, multivalue) VALUES ($1, $2, $2, $3, $4)`, [projectId, uid, type, multivalue]);

  it('numbers single-valued attributes per project and kind, in creation order; multivalue ones get none', async () => {
    const { project } = await seedTenancy(ds, 'slots');
    const rows: Array<{ kind: string; n: string; max: number | null }> = await ds.query(
      `SELECT meld_attribute_slot_kind(type) AS kind, count(slot) AS n, max(slot) AS max FROM attributes WHERE project_id = $1 GROUP BY 1`,
      [project.id],
    );
    // The seeded attributes are numbered densely from 0 per kind.
    for (const r of rows) expect(r.max === null ? 0 : r.max + 1).toBe(Number(r.n));
    const used = Object.fromEntries(rows.map((r) => [r.kind, Number(r.n)]));
    await insert(project.id, 'plan', 'string');
    await insert(project.id, 'score', 'number');
    await insert(project.id, 'tags', 'string', true);
    await insert(project.id, 'vip', 'boolean');
    const after = await slots(project.id);
    expect(after).toMatchObject({ plan: used.str ?? 0, score: used.num ?? 0, tags: null, vip: (used.num ?? 0) + 1 });
  });

  it('gives concurrent creations distinct slots and none beyond ATTRIBUTE_SLOTS', async () => {
    const { project } = await seedTenancy(ds, 'slots-full');
    await Promise.all(Array.from({ length: ATTRIBUTE_SLOTS + 5 }, (_, i) => insert(project.id, `n_${i}`, 'number')));
    const numbers = Object.entries(await slots(project.id)).filter(([uid]) => uid.startsWith('n_')).map(([, slot]) => slot);
    const given = numbers.filter((s): s is number => s !== null);
    const seededNumeric = Number((await ds.query(`SELECT count(slot) AS n FROM attributes WHERE project_id = $1 AND meld_attribute_slot_kind(type) = 'num' AND uid NOT LIKE 'n\\_%'`, [project.id]))[0].n);
    expect(new Set(given).size).toBe(given.length);
    expect(given.length).toBe(ATTRIBUTE_SLOTS - seededNumeric);
    expect(Math.max(...given)).toBe(ATTRIBUTE_SLOTS - 1);
  });

  it('has a ClickHouse column for every slot', async () => {
    const env = testEnv();
    const ch = createClickHouse({ url: env.clickhouseUrl, database: env.clickhouseDatabase });
    try {
      const columns = new Set((await ch.query<{ name: string; type: string }>(`SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = 'audience_contacts'`)).map((c) => `${c.name} ${c.type}`));
      for (let slot = 0; slot < ATTRIBUTE_SLOTS; slot++) {
        expect(columns).toContain(`${slotColumn('str', slot)} String`);
        expect(columns).toContain(`${slotColumn('num', slot)} Float64`);
      }
      expect(columns).not.toContain(`${slotColumn('str', ATTRIBUTE_SLOTS)} String`);
      // One bit per slot in the presence masks.
      expect(ATTRIBUTE_SLOTS).toBeLessThanOrEqual(32);
      expect(columns).toContain(`${slotMaskColumn('str')} UInt32`);
      expect(columns).toContain(`${slotMaskColumn('num')} UInt32`);
    } finally {
      await ch.close();
    }
  });
});
