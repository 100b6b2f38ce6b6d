import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { SenderCountryEntity, SenderEntity } from '@meld/db';
import { seedTenancy, startAppUnderTest } from '@meld/fixtures';
import type { DataSource } from 'typeorm';
import { appDefinition } from '../src/app.definition';

// tools/ is plain CommonJS outside the Nx graph, loaded by path as the e2e tests load tools/cli.
const { startSmsc } = require(join(__dirname, '../../../tools/smsc/simulator'));

export interface Smsc {
  port: number;
  close(): Promise<void>;
  /** A mobile-originated SMS to every bound session; the deliver_sm_resp statuses. */
  mo(message: { from: string; to: string; text: string }): Promise<number[]>;
  stats(): { submitted: number; failed: number; receiptsSent: number; receiptsDropped: number; sessions: number };
}

/**
 * The messaging app in-process on the test stores, bound to an SMSC simulator of its own on a
 * free port (no other engineer's submits or receipts mix with the test's).
 */
export async function startMessaging<S extends Smsc = Smsc>({ overrides = {}, smsc }: { overrides?: Record<string, string>; smsc?: S } = {}) {
  const session: S = smsc ?? (await startSmsc({ port: 0, receiptDelayMs: 50 }));
  process.env.MELD_SMSC_URL = `smpp://127.0.0.1:${session.port}`;
  const started = await startAppUnderTest(appDefinition, overrides);
  return { ...started, smsc: session };
}

export type Tenancy = Awaited<ReturnType<typeof seedTenancy>>;

/** A project with an active SMS sender for GB at `price`, set as the project default, locale en_GB. */
export async function seedSmsTenancy(db: DataSource, { price = 0.04, prepaid = false, funds = 42.5 } = {}) {
  const t = await seedTenancy(db, 'sms');
  await db.query(`UPDATE organizations SET prepaid = $2, funds = $3 WHERE id = $1`, [t.organization.id, prepaid, funds]);
  const sender = await db.getRepository(SenderEntity).save({ projectId: t.project.id, channel: 'sms' as const, alias: 'MELD', name: 'Meld', status: 'active' });
  await db.getRepository(SenderCountryEntity).save([
    { senderId: sender.id, country: 'GB', price },
    { senderId: sender.id, country: 'FR', accepted: false, effectiveStatus: 'blocked', price },
  ]);
  await db.query(`UPDATE projects SET locale = 'en_GB', default_sms_sender = $2 WHERE id = $1`, [t.project.id, sender.id]);
  return { ...t, sender };
}

/** An audience contact as identity-merge leaves it (merged attributes only). */
export async function seedContact(db: DataSource, projectId: string, attributes: Record<string, unknown>): Promise<string> {
  const id = randomUUID();
  await db.query(`INSERT INTO audience_contacts (project_id, id, attributes) VALUES ($1, $2, $3)`, [projectId, id, JSON.stringify(attributes)]);
  return id;
}
