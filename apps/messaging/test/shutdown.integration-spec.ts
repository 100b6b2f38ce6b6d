import { createDataSource } from '@meld/db';
import { type Json, principalHeader } from '@meld/fixtures';
import { waitFor } from '@meld/testing';
import { seedContact, seedSmsTenancy, startMessaging } from './app.fixture';

describe('messaging shutdown during a burst (real Postgres, Redis, SMSC simulator)', () => {
  it('every message the SMSC took has its status written: the send worker stops before the database closes', async () => {
    const { app, base, db, smsc } = await startMessaging();
    try {
      const t = await seedSmsTenancy(db);
      // Jobs an earlier run left queued (the queue name is fixed) go first: count only this run's submits.
      let seen = -1;
      await waitFor('no more submits of earlier runs', async () => {
        const now = smsc.stats().submitted;
        const quiet = now === seen;
        seen = now;
        return quiet || undefined;
      }, { intervalMs: 1000 });
      const before = smsc.stats().submitted;
      const ids: string[] = [];
      await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const audienceId = await seedContact(db, t.project.id, { _user_id: `u-shutdown-${i}`, _phone_mobile: `+4474001235${String(i).padStart(2, '0')}` });
          const url = `/v1/project/${t.project.uid}/channel/sms/sms/direct/default/${audienceId}`;
          const res = await fetch(`${base}${url}`, {
            method: 'POST',
            headers: { ...principalHeader(t, { scopes: ['PROJECT_DIRECT_WRITE'] }, { app: 'messaging', method: 'POST', url }), 'content-type': 'application/json' },
            body: JSON.stringify({ text: 'Your code is 4821' }),
          });
          ids.push(((await res.json()) as Json).entity.id);
        }),
      );
      // Close while the worker is submitting.
      await waitFor('a first submit', async () => (smsc.stats().submitted > before ? true : undefined), { timeoutMs: 10_000, intervalMs: 1 });
      await app.close();
      // The app's own connections are closed now.
      const check = await createDataSource({ url: process.env.MELD_POSTGRES_URL!, applicationName: 'meld-test-shutdown', poolSize: 1 }).initialize();
      const [{ taken }] = await check.query(`SELECT count(*)::int AS taken FROM sms_messages WHERE id = ANY($1::uuid[]) AND status <> 'enqueued'`, [ids]);
      await check.destroy();
      expect(taken).toBe(smsc.stats().submitted - before);
    } finally {
      await app.close().catch(() => undefined);
      await smsc.close();
    }
  });
});
