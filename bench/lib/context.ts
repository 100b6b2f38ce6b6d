import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Args } from './args';
import type { WatchedProcess } from './processes';

/** What a scenario gets from the harness. */
export interface BenchContext {
  args: Args;
  /** Repository root (for .stack/). */
  root: string;
  log(message: string): void;
  /** --brokers, else MELD_KAFKA_BROKERS, else .stack/kafka.brokers. */
  kafkaBrokers(): string[];
  /** Whether kafkaBrokers() is the local stack's broker (so .stack/pids/kafka.pid is the one in use). */
  usesStackKafka(): boolean;
  /** Extra processes to report (e.g. --broker-pid for a broker outside .stack/). */
  extraProcesses(): WatchedProcess[];
}

/** One line of the results table. */
export interface BenchRow {
  name: string;
  /** Operations per second (messages/s for the kafka scenario). */
  throughput: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU time per operation (what units.cpu says), when the scenario measures it. */
  cpuUsPerOp?: number;
  /** Peak RSS per watched process during this measurement, MB. */
  peakRssMb: Record<string, number>;
  /** Name of the row this one is compared with (the raw baseline of the same run). */
  baseline?: string;
  /** Repetitions the medians are taken over. */
  runs: number;
}

export interface ScenarioResult {
  title: string;
  /** What p50/p99 measure, and the unit of the throughput. */
  units: { throughput: string; latency: string; cpu?: string };
  rows: BenchRow[];
  notes: string[];
  /** Ratios rows must reach against their baselines (e.g. libs/kafka ≥ 0.9 × kafkajs). */
  goals?: Array<{ row: string; minRatio: number }>;
}

export type Scenario = (ctx: BenchContext) => Promise<ScenarioResult>;

export function createContext(args: Args, root: string): BenchContext {
  return {
    args,
    root,
    log: (m) => process.stderr.write(`[bench] ${m}\n`),
    kafkaBrokers() {
      const given = args.string('brokers') ?? process.env.MELD_KAFKA_BROKERS;
      if (given) return given.split(',').map((b) => b.trim()).filter(Boolean);
      const file = join(root, '.stack/kafka.brokers');
      if (existsSync(file)) return readFileSync(file, 'utf8').trim().split(',');
      throw new Error('no Kafka broker: set MELD_KAFKA_BROKERS, pass --brokers host:port, or start the stack (`meld stack up`)');
    },
    usesStackKafka() {
      const file = join(root, '.stack/kafka.brokers');
      return existsSync(file) && readFileSync(file, 'utf8').trim() === this.kafkaBrokers().join(',');
    },
    extraProcesses() {
      const pid = args.string('broker-pid');
      return pid ? [{ name: 'kafka', pid: Number(pid) }] : [];
    },
  };
}
