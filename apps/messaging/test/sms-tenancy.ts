import { randomUUID } from 'node:crypto';
import { SenderCountryEntity, SenderEntity } from '@meld/db';
import { type Json, principalHeader, seedTenancy } from '@meld/fixtures';
import type { DataSource } from 'typeorm';

// Seeds of the SMS tests, apart from the in-process app so that tests running messaging as a process use them too.

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

/**
 * A keyed direct SMS to an audience contact, timed: what the store-outage specs read of its answer.
 * `timeoutMs` bounds the wait, so a send that hangs fails the test instead of holding it.
 */
export async function timedSend(base: string, t: Awaited<ReturnType<typeof seedSmsTenancy>>, audienceId: string, key: string, timeoutMs: number) {
  const url = `/v1/project/${t.project.uid}/channel/sms/sms/direct/default/${audienceId}`;
  const started = Date.now();
  const res = await fetch(`${base}${url}`, {
    method: 'POST',
    headers: { ...principalHeader(t, { scopes: ['PROJECT_DIRECT_WRITE'] }, { app: 'messaging', method: 'POST', url }), 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ text: 'Your code is 4821' }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Json, ms: Date.now() - started };
}

