import { randomUUID } from 'node:crypto';
import { principalHeader } from '@meld/fixtures';
import { waitFor } from '@meld/testing';
import { Queue, UnrecoverableError, Worker } from 'bullmq';
import Redis from 'ioredis';
import { SEND_QUEUE, SendQueue } from '../src/sms/delivery/send-queue';
import { seedContact, seedSmsTenancy } from './app.fixture';
import { messagingOnPrivateRedis, startCountingSmsc, startPrivateRedis } from './durability';

jest.setTimeout(60_000);

// A message still `enqueued` whose BullMQ job ended in the failed set without `failed` being
// recorded: what BullMQ does to a job that stalled more than `maxStalledCount` (1) times, i.e.
// whose worker was killed twice while holding it. The job id (the send job stored with the
// message, ADR 0324) stays taken for a day, so the sweep's add was a no-op and the acknowledged
// message was never sent (ADR 0268).
describe('the recovery sweep and a message whose job BullMQ failed (private redis-server, SMSC simulator)', () => {
  let redis: Awaited<ReturnType<typeof startPrivateRedis>>;
  const processes = messagingOnPrivateRedis(() => redis.url);
  const startAs = processes.start;
  beforeAll(async () => {
    redis = await startPrivateRedis();
  });
  afterAll(async () => {
    await processes.closeAll();
    await redis?.stop();
  });

  it('queues it again, and it is delivered', async () => {
    const api = await startAs('api');
    const t = await seedSmsTenancy(api.db);
    const audienceId = await seedContact(api.db, t.project.id, { _user_id: 'u-failed-job', _phone_mobile: '+447400123423' });
    const url = `/v1/project/${t.project.uid}/channel/sms/sms/direct/default/${audienceId}`;
    // Unique: the sweep also re-queues what other tests left `enqueued` in the shared database.
    const text = `your code is ${randomUUID()}`;
    const res = await fetch(`${api.base}${url}`, {
      method: 'POST',
      headers: { ...principalHeader(t, { scopes: ['PROJECT_DIRECT_WRITE'] }, { app: 'messaging', method: 'POST', url }), 'content-type': 'application/json' },
      body: JSON.stringify({ text }),
    });
    expect(res.status).toBe(201);
    const smsId = ((await res.json()) as { entity: { id: string } }).entity.id;
    const [{ send_job: jobId }] = await api.db.query(`SELECT send_job FROM sms_messages WHERE id = $1`, [smsId]);

    // The job fails for good without the app's worker ever seeing it, as a twice-stalled job does.
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const queue = new Queue(SEND_QUEUE, { connection });
    const workerConnection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const worker = new Worker(
      SEND_QUEUE,
      async () => {
        throw new UnrecoverableError('job stalled more than allowable limit');
      },
      { connection: workerConnection },
    );
    try {
      await waitFor('the job failed', async () => (await queue.getJobState(jobId)) === 'failed');
    } finally {
      await worker.close();
      workerConnection.disconnect();
    }
    // Older than a sweep period, as it would be by the next sweep.
    await api.db.query(`UPDATE sms_messages SET created_at = now() - interval '1 minute' WHERE id = $1`, [smsId]);

    const smsc = await startCountingSmsc();
    const delivery = await startAs('delivery', smsc);
    await delivery.app.get(SendQueue).sweep();
    try {
      await waitFor('the message delivered', async () => (await api.db.query(`SELECT status FROM sms_messages WHERE id = $1`, [smsId]))[0].status === 'delivered', { timeoutMs: 10_000 });
    } finally {
      await queue.close();
      connection.disconnect();
    }
    expect(smsc.submitCount(text)).toBe(1);
  });
});
