import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createKafkaClient } from '../../libs/kafka/src';

/** A development broker started for one measurement and stopped after it. */
export interface PrivateKafka {
  brokers: string[];
  pid: number;
  stop(): Promise<void>;
}

const running = new Set<ReturnType<typeof spawn>>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGTERM');
});

/**
 * Starts the repo's development broker (tools/stack/kafka-dev-broker.c, built by the stack
 * tooling) with the given topics pre-created. A private broker per measurement means the
 * figures do not depend on what else the shared broker holds, its memory is the
 * measurement's own, and the shared broker is not left holding benchmark data (the mock
 * keeps up to 5 MB per partition in memory until it stops).
 */
export async function startPrivateKafka(
  root: string,
  topics: string[],
  partitions: number,
  log: (m: string) => void,
  o: { longPoll?: boolean } = {},
): Promise<PrivateKafka> {
  const stackKafka = join(root, 'tools/stack/kafka.js');
  if (!existsSync(stackKafka)) throw new Error('tools/stack/kafka.js not found: pass --brokers host:port to use a running broker');
  const { buildBroker } = require(stackKafka) as { buildBroker: (log: (m: string) => void) => Promise<string> };
  const bin = await buildBroker(log);
  const file = join(tmpdir(), `meld-bench-kafka-${process.pid}-${Date.now()}.brokers`);
  // `longPoll: false`: clients talk to the bare mock, which holds every empty fetch (ADR 0260).
  const flags = o.longPoll === false ? ['--no-long-poll'] : [];
  const child = spawn(bin, ['--bootstrap-file', file, '--partitions', String(partitions), ...flags, ...topics], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  // Its stderr only matters when it fails to start (it also says "stopped" on every SIGTERM).
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    if (stderr.length < 4000) stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const bootstrap = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => resolve(line.trim()));
    child.once('exit', (code) => reject(new Error(`kafka-dev-broker exited with ${code} before printing its address: ${stderr.trim()}`)));
    setTimeout(() => reject(new Error('kafka-dev-broker did not print its address within 15 s')), 15_000).unref();
  });
  return {
    brokers: bootstrap.split(','),
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      running.delete(child);
      rmSync(file, { force: true });
    },
  };
}

/**
 * Messages the development broker dropped from the start of a topic's partitions (it keeps
 * 5 MB per partition and drops the oldest silently): the sum of the partitions' low
 * watermarks, for a topic created empty by this run's broker. Non-zero means a consumer that
 * was that far behind lost messages, so a scenario reports it instead of waiting forever.
 */
export async function droppedMessages(brokers: string[], topic: string): Promise<number> {
  const admin = createKafkaClient({ brokers, clientId: 'meld-bench-admin' }).admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets.reduce((n, p) => n + Number(p.low), 0);
  } finally {
    await admin.disconnect();
  }
}
