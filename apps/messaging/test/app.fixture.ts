import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { startAppUnderTest } from '@meld/fixtures';
import { appDefinition } from '../src/app.definition';

export { type Tenancy, seedContact, seedSmsTenancy, timedSend } from './sms-tenancy';

// tools/ is plain CommonJS outside the Nx graph, loaded by path as the e2e tests load tools/cli.
const { startSmsc } = require(join(__dirname, '../../../tools/smsc/simulator'));

export interface Smsc {
  port: number;
  close(): Promise<void>;
  /** A mobile-originated SMS to every bound session; the deliver_sm_resp statuses. */
  mo(message: { from: string; to: string; text: string }): Promise<number[]>;
  stats(): { submitted: number; failed: number; receiptsSent: number; receiptsResent: number; receiptsPending: number; sessions: number };
}

/**
 * The messaging app in-process on the test stores, bound to an SMSC simulator of its own on a
 * free port (no other engineer's submits or receipts mix with the test's).
 */
export async function startMessaging<S extends Smsc = Smsc>({ overrides: given = {}, smsc }: { overrides?: Record<string, string>; smsc?: S } = {}) {
  // An erasure consumer group of its own (ADR 0358): apps of other specs on the broker never share its partitions.
  const overrides = { MELD_MESSAGING_ERASURE_GROUP: `messaging-erasure-test-${randomUUID()}`, ...given };
  const session: S = smsc ?? (await startSmsc({ port: 0, receiptDelayMs: 50 }));
  process.env.MELD_SMSC_URL = `smpp://127.0.0.1:${session.port}`;
  // Parts of the app read process.env directly while booting (BullMQ's Redis URL, the role): the overrides apply there too.
  const saved = Object.fromEntries(Object.keys(overrides).map((k) => [k, process.env[k]]));
  Object.assign(process.env, overrides);
  let started: Awaited<ReturnType<typeof startAppUnderTest>>;
  try {
    started = await startAppUnderTest(appDefinition, overrides);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  return { ...started, smsc: session };
}
