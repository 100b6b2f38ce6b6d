import { errorSummary } from '@meld/contracts';
import type { Plan } from '@meld/contracts';
import { type ClickHouse, join, raw, sql, type Sql } from '@meld/clickhouse';
import { DATA_SOURCE } from '@meld/db';
import { CLICKHOUSE, loadConfig, metricsRegistry, REDIS } from '@meld/platform';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type Redis from 'ioredis';
import { Counter, Gauge } from 'prom-client';
import type { DataSource } from 'typeorm';
import { z } from 'zod';
import { ProbeClock } from '../shared/probe-clock';
import { type ProjectRetention, type Prune, prunes } from './retention-plan';

/** How often retention runs: one replica per period, fleet-wide (a Redis lock of just under this length). */
export const RETENTION_INTERVAL_MS = 60 * 60_000;
/** A pod's first try of the lock comes this long after its start, plus up to as much again (jitter). */
const FIRST_TRY_MS = 60_000;
const LOCK_KEY = 'meld:probes:retention:lock';
const CONDITIONS_PER_MUTATION = 200;

export interface RetentionRun {
  projects: number;
  /** ALTER TABLE … DELETE mutations issued (none when nothing was past its retention). */
  mutations: number;
  /** Events those mutations remove. */
  events: number;
}

const schedule = z.object({
  MELD_PROBES_RETENTION_EVERY_MS: z.coerce
    .number()
    .int()
    .refine((ms) => ms === 0 || (ms >= 10_000 && ms <= RETENTION_INTERVAL_MS), `must be 0 (off) or 10000-${RETENTION_INTERVAL_MS}`)
    .default(5 * 60_000),
});

/**
 * `MELD_PROBES_RETENTION_EVERY_MS` (default 5 min): how often each replica tries the lock, so a
 * run happens about hourly however long pods live (ADR 0168); `0` turns pruning off (tests).
 */
export function retentionEveryMs(env: NodeJS.ProcessEnv = process.env): number {
  return loadConfig(schedule, env).MELD_PROBES_RETENTION_EVERY_MS;
}

function metric<T>(name: string, make: () => T): T {
  return (metricsRegistry.getSingleMetric(name) as T | undefined) ?? make();
}

/**
 * Retention is real (issue 15 item 3, ADR 0168): ClickHouse 18.16 has no TTL, so an hourly job
 * deletes the events past the plan's look-back and past each type's shorter `retentionDays`:
 * a count per project (and per such type) finds what is due, and one `ALTER TABLE events DELETE`
 * per 200 due conditions removes it; nothing due, no mutation.
 */
@Injectable()
export class RetentionPruner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('RetentionPruner');
  private timer?: NodeJS.Timeout;
  private readonly everyMs = retentionEveryMs();
  private readonly pruned = metric('meld_probes_retention_pruned_events_total', () => new Counter({ name: 'meld_probes_retention_pruned_events_total', help: 'Events deleted by retention pruning (ADR 0168)', registers: [metricsRegistry] }));
  private readonly lastRun = metric('meld_probes_retention_last_run_seconds', () => new Gauge({ name: 'meld_probes_retention_last_run_seconds', help: 'Unix time of the last completed retention run', registers: [metricsRegistry] }));

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLICKHOUSE) private readonly ch: ClickHouse,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly clock: ProbeClock,
  ) {}

  onApplicationBootstrap(): void {
    if (this.everyMs === 0) return;
    this.schedule(Math.min(FIRST_TRY_MS, this.everyMs) * (1 + Math.random()));
  }

  beforeApplicationShutdown(): void {
    clearTimeout(this.timer);
  }

  /** Tries often and lets the lock set the pace: with an hourly timer, pods restarted more often than hourly never pruned. */
  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.schedule(this.everyMs);
      void this.runIfLeader();
    }, delayMs);
    this.timer.unref();
  }

  private async runIfLeader(): Promise<void> {
    try {
      if (await this.redis.set(LOCK_KEY, '1', 'PX', RETENTION_INTERVAL_MS - 60_000, 'NX')) await this.run();
    } catch (err) {
      this.logger.error({ msg: 'retention run failed', err: errorSummary(err) });
    }
  }

  /** One pass over every project; also what tests call. */
  async run(): Promise<RetentionRun> {
    const nowSeconds = Math.floor(this.clock.now() / 1000);
    const projects = await this.projects();
    const due: Sql[] = [];
    let events = 0;
    for (const p of prunes(projects, nowSeconds)) {
      const condition = this.condition(p);
      const [row] = await this.ch.query<{ n: string }>(sql`SELECT count() AS n FROM events WHERE ${condition}`);
      const n = Number(row?.n ?? 0);
      if (n === 0) continue;
      due.push(condition);
      events += n;
    }
    // Every mutation rewrites the parts it touches (events has one partition): one per batch of conditions, not one per project and type.
    let mutations = 0;
    for (let i = 0; i < due.length; i += CONDITIONS_PER_MUTATION, mutations += 1) {
      await this.ch.command(sql`ALTER TABLE events DELETE WHERE ${join(due.slice(i, i + CONDITIONS_PER_MUTATION).map((c) => sql`(${c})`), ' OR ')}`);
    }
    this.pruned.inc(events);
    this.lastRun.set(nowSeconds);
    const run = { projects: projects.length, mutations, events };
    this.logger.log({ msg: 'retention run', ...run });
    return run;
  }

  private condition(p: Prune): Sql {
    const type = p.eventType === undefined ? raw('') : sql` AND event_type = ${p.eventType}`;
    return sql`project_id = ${p.projectId}${type} AND event_date < toDateTime(${p.before})`;
  }

  private async projects(): Promise<ProjectRetention[]> {
    const rows: Array<{ id: string; plan: Plan; types: Array<{ uid: string; retentionDays: number }> | null }> = await this.db.query(
      `SELECT p.id, o.plan, (SELECT json_agg(json_build_object('uid', t.uid, 'retentionDays', t.retention_days)) FROM event_types t WHERE t.project_id = p.id AND t.retention_days IS NOT NULL) AS types
         FROM projects p JOIN organizations o ON o.id = p.organization_id ORDER BY p.id`,
    );
    return rows.map((r) => ({ projectId: r.id, plan: r.plan, eventTypes: r.types ?? [] }));
  }
}
