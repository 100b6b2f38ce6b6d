/**
 * What the property tests over random worlds share: the reference time, the run count and seed
 * (MELD_FUZZ_RUNS, MELD_FUZZ_SEED replays a run), and worlds sampled from the seed and written
 * to ClickHouse, each under its own project id.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { ClickHouse } from '@meld/clickhouse';
import { worldArbitrary } from './arbitraries';
import { TEST_CATALOGUE } from './test-catalogue';
import { seedWorlds, type World } from './world';

export const FUZZ_NOW = new Date('2026-06-15T12:00:00Z');
export const FUZZ_N = FUZZ_NOW.getTime() / 1000;
export const FUZZ_RUNS = Number(process.env.MELD_FUZZ_RUNS ?? 200);
export const FUZZ_SEED = Number(process.env.MELD_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));

export async function seededWorlds(ch: ClickHouse, count: number): Promise<Array<{ projectId: string; world: World }>> {
  const worlds = fc.sample(worldArbitrary(TEST_CATALOGUE, FUZZ_N), { numRuns: count, seed: FUZZ_SEED }).map((world) => ({ projectId: randomUUID(), world }));
  await seedWorlds(ch, worlds, TEST_CATALOGUE);
  return worlds;
}
