import { principalHeader } from '@meld/fixtures';
import { waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { seedContact, seedSmsTenancy, startMessaging } from './app.fixture';
import { type Answered, burst, startCountingSmsc, startPrivateRedis } from './durability';

// Issue 17: a Redis restart (queues persisted with AOF) loses no enqueued SMS (ADR 0268). The
// Redis is a private one: the shared stack's must never be restarted.
jest.setTimeout(110_000);

describe('a SIGKILL and restart of Redis during a burst of direct SMS (private redis-server, SMSC simulator)', () => {
  let redis: Awaited<ReturnType<typeof startPrivateRedis>>;
  let smsc: Awaited<ReturnType<typeof startCountingSmsc>>;
  let app: INestApplication;
  let base: string;
  let db: DataSource;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    smsc = await startCountingSmsc();
    ({ app, base, db } = await startMessaging({ overrides: { MELD_REDIS_URL: redis.url }, smsc }));
  });
  afterAll(async () => {
    await app?.close();
    await smsc?.close();
    await redis?.stop();
  });

  it('delivers every SMS answered 201 and submits each exactly once', async () => {
    const t = await seedSmsTenancy(db);
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-redis', _phone_mobile: '+447400123423' });
    const url = `/v1/project/${t.project.uid}/channel/sms/sms/direct/default/${audienceId}`;
    const send = async (text: string, key: string) => {
      const res = await fetch(`${base}${url}`, {
        method: 'POST',
        headers: { ...principalHeader(t, { scopes: ['PROJECT_DIRECT_WRITE'] }, { app: 'messaging', method: 'POST', url }), 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ text }),
        signal: AbortSignal.timeout(20_000),
      });
      const body = (await res.json()) as { entity?: { id: string } };
      return { status: res.status, smsId: body.entity?.id };
    };

    let killedAt = 0;
    const answers = await burst(send, {
      total: 300,
      clients: 8,
      tag: 'redis',
      during: async (so) => {
        await waitFor('a third of the burst answered', async () => so.length >= 100, { timeoutMs: 30_000, intervalMs: 20 });
        await redis.kill();
        killedAt = so.length;
        await new Promise((r) => setTimeout(r, 1000));
        await redis.restart();
      },
    });
    // The app's queue lives in the Redis that was killed, not in the stack's.
    expect((await redis.keys('bull:meld-sms-send:*')).length).toBeGreaterThan(0);
    expect(killedAt).toBeGreaterThan(0);
    expect(killedAt).toBeLessThan(300);

    // A send during the outage is refused with 503 and stores nothing (ADR 0284): the client retries it with its key
    // (sooner than its Retry-After, as the queue's connection comes back within a few seconds of Redis).
    const refused = answers.filter((x) => x.status !== 201);
    expect(new Set(refused.map((a) => a.status))).toEqual(new Set(refused.length ? [503] : []));
    const retried: Answered[] = [];
    for (const a of refused) {
      retried.push({ ...a, ...(await waitFor(`a retry of ${a.key} answered 201`, async () => {
        const again = await send(a.text, a.key);
        return again.status === 201 ? again : undefined;
      }, { timeoutMs: 20_000, intervalMs: 250 })) });
    }
    const acknowledged = [...answers.filter((a) => a.status === 201), ...retried];
    expect(acknowledged).toHaveLength(300);

    // Jobs written in the last second before the kill may be missing from the AOF: the sweep
    // re-queues what is `enqueued` for over 30 s, every 30 s (ADR 0153), so this waits up to a minute.
    const ids = acknowledged.map((a) => a.smsId!);
    await waitFor(
      'every acknowledged SMS delivered',
      async () => (await db.query(`SELECT count(*)::int AS n FROM sms_messages WHERE id = ANY($1) AND status = 'delivered'`, [ids]))[0].n === ids.length,
      { timeoutMs: 75_000, intervalMs: 500 },
    );
    const twice = acknowledged.filter((a) => smsc.submitCount(a.text) !== 1).map((a) => `${a.text}: ${smsc.submitCount(a.text)}`);
    expect(twice).toEqual([]);
  });
});
