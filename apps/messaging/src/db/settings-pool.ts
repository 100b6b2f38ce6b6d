import { errorSummary } from '@meld/contracts';
import { rawPool } from '@meld/db';
import { Logger } from '@nestjs/common';
import { Pool, type PoolConfig } from 'pg';
import type { DataSource } from 'typeorm';

const log = new Logger('postgres');

/**
 * A pool of `max` connections to the DataSource's database whose sessions start with planner
 * settings (`-c name=value …` as libpq's `options`), for a statement that needs them at every
 * run: one round trip per run instead of BEGIN with `SET LOCAL`, the statement and COMMIT
 * (ADR 0315). Its connections come and go like the main pool's (a broken one is dropped and
 * the next run opens another); idle, they let the process exit; `end()` closes them.
 */
export function settingsPool(ds: DataSource, settings: Readonly<Record<string, string>>, max = 1): Pool {
  const base = rawPool(ds).options as PoolConfig;
  const options = [base.options, ...Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`)].filter(Boolean).join(' ');
  // The main pool keeps its password out of enumeration: it is read by name.
  const pool = new Pool({ ...base, password: base.password, max, options, allowExitOnIdle: true });
  // An idle connection that breaks (a Postgres restart) is dropped by the pool; unheard, the error would end the process.
  pool.on('error', (err) => log.warn(`idle connection of a settings pool: ${errorSummary(err)}`));
  return pool;
}
