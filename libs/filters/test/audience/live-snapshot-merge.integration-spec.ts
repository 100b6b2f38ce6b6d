/**
 * liveSnapshot under concurrent merges (ADR 0341), on a ClickHouse database of this spec's own:
 * each round stores a contact's first state, then its −1 and second state in another part, and
 * reads the audience while OPTIMIZE collapses the pair. Every read must list each contact once.
 * When the −1 set was read after the scan had chosen its parts, a few reads in a hundred listed
 * the changed contact twice (the stale +1 from the old parts, its −1 merged away).
 */
import { randomUUID } from 'node:crypto';
import { type ClickHouse, createClickHouse, ident, migrateClickHouse, sql } from '@meld/clickhouse';
import { testEnv } from '@meld/testing';
import { liveSnapshot } from '../../src/audience';

const ROUNDS = 80;
const READS_PER_ROUND = 12;
const BACKGROUND = 2000;

let ch: ClickHouse;
const database = `meld_test_live_snapshot_${process.pid}`;
const projectId = randomUUID();
const state = (audienceId: string, version: number, sign: 1 | -1) => ({ project_id: projectId, audience_id: audienceId, version, deleted: 0, s0: `v${version}`, sign });

beforeAll(async () => {
  const env = testEnv();
  if (!/test/.test(database)) throw new Error('not a test database');
  ch = createClickHouse({ url: env.clickhouseUrl, database });
  await ch.ensureDatabase();
  await migrateClickHouse({ client: ch });
  await ch.insert('audience_snapshot', Array.from({ length: BACKGROUND }, (_, i) => state(`b${i}`, 1, 1)));
});

afterAll(async () => {
  await ch?.command(sql`DROP DATABASE IF EXISTS ${ident(database)}`);
  await ch?.close();
});

it('lists every current contact once while merges collapse +1/−1 pairs', async () => {
  const twice: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const id = `c${round}`;
    await ch.insert('audience_snapshot', [state(id, 1, 1)]);
    await ch.insert('audience_snapshot', [state(id, 1, -1), state(id, 2, 1)]);
    const merge = ch.command('OPTIMIZE TABLE audience_snapshot');
    const reads = await Promise.all(Array.from({ length: READS_PER_ROUND }, () => ch.query<{ id: string }>(sql`SELECT audience_id AS id FROM ${liveSnapshot(projectId)}`)));
    await merge;
    for (const rows of reads) {
      const ids = rows.map((r) => r.id);
      const seen = new Set(ids);
      if (seen.size !== ids.length) twice.push(`round ${round}: ${ids.length - seen.size} listed twice`);
      expect(seen.size).toBe(BACKGROUND + round + 1);
    }
  }
  expect(twice).toEqual([]);
}, 180_000);
