import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@meld/testing';
import Redis from 'ioredis';
import { type Smsc, startMessaging } from './app.fixture';

// Helpers of the durability tests (issue 17, ADR 0268): a Redis of their own that they may
// SIGKILL, and an SMSC simulator that counts the submit_sm of each message.
const { startSmsc } = require(join(__dirname, '../../../tools/smsc/simulator'));

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A private redis-server (Debian's binary) persisting as the stack's does (tools/stack/redis.js:
 * AOF on, Redis's default `appendfsync everysec`, no RDB), so the shared Redis is never touched.
 */
export async function startPrivateRedis() {
  const dir = mkdtempSync(join(tmpdir(), 'meld-redis-'));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}/0`;
  let child: ChildProcess;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec', '--daemonize', 'no'], { stdio: 'ignore' });
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      await waitFor(`private redis on ${port}`, () => probe.connect().then(() => probe.ping()).catch(() => probe.disconnect()), { timeoutMs: 10_000 });
    } finally {
      probe.disconnect();
    }
  };
  const kill = async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url,
    kill,
    /** Keys matching `pattern`: a test checks the app really queues here. */
    async keys(pattern: string): Promise<string[]> {
      const client = new Redis(url, { maxRetriesPerRequest: 1 });
      try {
        return await client.keys(pattern);
      } finally {
        client.disconnect();
      }
    },
    /** A fresh server on the same port and directory: it loads the append-only file. */
    restart: start,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * An SMSC simulator on a free port that records the accepted submit_sm of each text (each test
 * text is unique) and, from its log, when each receipt left (sent, or dropped for want of a session).
 */
export async function startCountingSmsc(): Promise<Smsc & CountingSmsc> {
  const submits = new Map<string, number[]>();
  const receipts = new Map<string, number>();
  const binds: number[] = [];
  const onSubmit = (submit: { status: string; text: string }) => {
    if (submit.status === 'accepted') submits.set(submit.text, [...(submits.get(submit.text) ?? []), Date.now()]);
  };
  const logger = {
    info(record: { event?: string; messageId?: string }) {
      if (record.event === 'deliver_sm' && record.messageId) receipts.set(record.messageId, Date.now());
      if (record.event?.startsWith('bind_')) binds.push(Date.now());
    },
    warn(record: { event?: string; messageId?: string }) {
      if (record.event === 'deliver_sm' && record.messageId) receipts.set(record.messageId, Date.now());
    },
  };
  const smsc: Smsc = await startSmsc({ port: 0, receiptDelayMs: 50, logger, onSubmit });
  return Object.assign(smsc, { submits, receipts, binds, submitCount: (text: string) => submits.get(text)?.length ?? 0 });
}

export interface CountingSmsc {
  /** Times of the accepted submit_sm of each text. */
  submits: Map<string, number[]>;
  /** When the receipt of each SMSC message id left the simulator. */
  receipts: Map<string, number>;
  /** Times of the binds. */
  binds: number[];
  submitCount(text: string): number;
}

export interface Answered {
  key: string;
  text: string;
  status: number;
  smsId?: string;
  /** The error body's message, when the answer was not 201. */
  message?: string;
}

/**
 * `total` sends from `clients` concurrent clients, each with its own Idempotency-Key and a
 * unique text; `during` runs meanwhile (the kill; it sees the answers so far). A request cut by the failure is answered
 * with status 0.
 */
export async function burst(
  send: (text: string, key: string) => Promise<Omit<Answered, 'key' | 'text'>>,
  { total, clients, tag, during }: { total: number; clients: number; tag: string; during: (answers: readonly Answered[]) => Promise<void> },
): Promise<Answered[]> {
  const answers: Answered[] = [];
  let next = 0;
  const client = async () => {
    while (next < total) {
      const i = next++;
      const key = `${tag}-${i}`;
      const text = `burst ${tag} #${i}`;
      const res = await send(text, key).catch(() => ({ status: 0, smsId: undefined }));
      answers.push({ key, text, ...res });
    }
  };
  await Promise.all([...Array.from({ length: clients }, client), during(answers)]);
  return answers;
}

/**
 * The messaging processes of one suite on its private Redis (`redisUrl` read at each start), each
 * in the role a test asks; `closeAll` for the suite's afterAll, the last started first.
 */
export function messagingOnPrivateRedis(redisUrl: () => string) {
  const started: Array<Awaited<ReturnType<typeof startMessaging>>> = [];
  return {
    async start(role: 'api' | 'delivery', smsc?: CountingSmsc & Smsc) {
      const s = await startMessaging({ overrides: { MELD_REDIS_URL: redisUrl(), MELD_MESSAGING_ROLE: role }, smsc });
      started.push(s);
      return s;
    },
    async closeAll() {
      for (const s of started.reverse()) {
        await s.app.close();
        await s.smsc.close();
      }
    },
  };
}
