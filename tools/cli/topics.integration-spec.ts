import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { testEnv } from '@meld/testing';

const meld = join(__dirname, 'meld.js');

/** `meld topics` against the development broker (one broker, topics pre-created): the copies follow the cluster's size (ADR 0356). */
describe('meld topics', () => {
  const env = testEnv();
  const topics = (extra: NodeJS.ProcessEnv = {}) =>
    spawnSync(process.execPath, [meld, 'topics'], { encoding: 'utf8', env: { ...process.env, MELD_KAFKA_BROKERS: env.kafkaBrokers.join(','), ...extra } });

  it('finds every topic present on a one-broker cluster', () => {
    const out = topics();
    expect([out.status, out.stderr]).toEqual([0, '']);
    expect(out.stdout).toMatch(/all present/);
  });

  it('refuses more copies than the cluster has brokers, naming the variable', () => {
    const out = topics({ MELD_KAFKA_REPLICATION_FACTOR: '3' });
    expect(out.status).not.toBe(0);
    expect(out.stderr).toMatch(/MELD_KAFKA_REPLICATION_FACTOR: 3 copies, but the cluster has 1 broker/);
  });
});
