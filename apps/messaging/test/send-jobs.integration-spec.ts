import { randomUUID } from 'node:crypto';
import { principalHeader } from '@meld/fixtures';
import { waitFor } from '@meld/testing';
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { SEND_QUEUE, SendQueue } from '../src/sms/delivery/send-queue';
import { seedContact, seedSmsTenancy } from './app.fixture';
import { messagingOnPrivateRedis, startCountingSmsc, startPrivateRedis } from './durability';

jest.setTimeout(60_000);

// A send job carries the messages of one send batch, its id stored on their rows as `send_job`
// (ADR 0324). What must hold: a message is only ever in that one job (the sweep re-queues it
// under the same id, and only when the job is gone or failed), a job run again submits only what
// is still `enqueued`, and rows from before the column (NULL) are queued under their own id.
describe('send jobs of a send batch (ADR 0324; private redis-server, SMSC simulator)', () => {
  let redis: Awaited<ReturnType<typeof startPrivateRedis>>;
  let connection: Redis;
  let queue: Queue;
  const processes = messagingOnPrivateRedis(() => redis.url);
  const startAs = processes.start;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    queue = new Queue(SEND_QUEUE, { connection });
  });
  afterAll(async () => {
    await processes.closeAll();
    await queue?.close();
    connection?.disconnect();
    await redis?.stop();
  });

  it('queues a batch as one job, leaves a waiting job to itself, re-queues a lost one under its id, and submits each message once', async () => {
    const api = await startAs('api');
    const t = await seedSmsTenancy(api.db);
    const run = randomUUID();
    const audienceId = await seedContact(api.db, t.project.id, { _user_id: `u-jobs-${run}`, _phone_mobile: '+447400123431' });
    const url = `/v1/project/${t.project.uid}/channel/sms/sms/direct/default/${audienceId}`;
    const send = async (text: string) => {
      const res = await fetch(`${api.base}${url}`, {
        method: 'POST',
        headers: { ...principalHeader(t, { scopes: ['PROJECT_DIRECT_WRITE'] }, { app: 'messaging', method: 'POST', url }), 'content-type': 'application/json' },
        body: JSON.stringify({ text }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { entity: { id: string } }).entity.id;
    };
    const texts = Array.from({ length: 8 }, (_, i) => `jobs ${run} #${i}`);

    // Inserts blocked: the first batches wait in Postgres and the later sends queue behind them,
    // so once the lock is gone those go as one batch, and one job.
    const lock = api.db.createQueryRunner();
    await lock.connect();
    await lock.startTransaction();
    await lock.query('LOCK TABLE sms_messages IN SHARE MODE');
    const sending = Promise.all(texts.slice(0, 6).map((text) => send(text)));
    await new Promise((resolve) => setTimeout(resolve, 500));
    await lock.commitTransaction();
    await lock.release();
    const ids = await sending;

    const rows: Array<{ id: string; send_job: string }> = await api.db.query(`SELECT id, send_job FROM sms_messages WHERE id = ANY($1::uuid[])`, [ids]);
    const byJob = new Map<string, string[]>();
    for (const r of rows) byJob.set(r.send_job, [...(byJob.get(r.send_job) ?? []), r.id]);
    expect([...byJob.keys()].every((id) => id !== null)).toBe(true);
    const shared = [...byJob].find(([, members]) => members.length > 1);
    expect(shared).toBeDefined();
    // Each job holds exactly the messages stored with its id.
    for (const [jobId, members] of byJob) {
      const job = await queue.getJob(jobId);
      expect(job?.data.messages.map((m: { smsId: string }) => m.smsId).sort()).toEqual([...members].sort());
    }
    const [sharedJob, sharedMembers] = shared!;
    const alreadySent = sharedMembers[0]!;
    // Two more, one after the other: a job each.
    const lostSms = await send(texts[6]!);
    const legacySms = await send(texts[7]!);
    ids.push(lostSms, legacySms);
    const [lostJob, legacyJob]: string[] = (await api.db.query(`SELECT send_job FROM sms_messages WHERE id = ANY($1::uuid[]) ORDER BY array_position($1::uuid[], id)`, [[lostSms, legacySms]])).map(
      (r: { send_job: string }) => r.send_job,
    );
    expect((await queue.getJob(lostJob!))?.data.messages.map((m: { smsId: string }) => m.smsId)).toEqual([lostSms]);

    // Older than a sweep period. The sweep leaves the waiting jobs alone: no job appears under a message's id.
    await api.db.query(`UPDATE sms_messages SET created_at = now() - interval '1 minute' WHERE id = ANY($1::uuid[])`, [ids]);
    await api.app.get(SendQueue).sweep();
    for (const id of ids) expect(await queue.getJobState(id)).toBe('unknown');
    expect(await queue.getJobState(sharedJob)).toBe('waiting');

    // One job lost by Redis; one message stored before the column (NULL), its job gone too; one
    // message of the shared job submitted by an earlier run of that job.
    await queue.remove(lostJob!);
    await queue.remove(legacyJob!);
    await api.db.query(`UPDATE sms_messages SET send_job = NULL WHERE id = $1`, [legacySms]);
    await api.db.query(`UPDATE sms_messages SET status = 'sent', smsc_message_id = $2 WHERE id = $1`, [alreadySent, `earlier-${run}`]);
    await api.app.get(SendQueue).sweep();
    expect((await queue.getJob(lostJob!))?.data.messages).toEqual([{ smsId: lostSms }]);
    expect((await queue.getJob(legacySms))?.data.messages).toEqual([{ smsId: legacySms }]);
    expect(await queue.getJobState(legacyJob!)).toBe('unknown');

    const smsc = await startCountingSmsc();
    await startAs('delivery', smsc);
    const pending = ids.filter((id) => id !== alreadySent);
    await waitFor(
      'the messages delivered',
      async () => (await api.db.query(`SELECT count(*)::int AS n FROM sms_messages WHERE id = ANY($1::uuid[]) AND status = 'delivered'`, [pending]))[0].n === pending.length,
      { timeoutMs: 15_000 },
    );
    const textOf = new Map(ids.map((id, i) => [id, texts[i]!]));
    expect(ids.map((id) => smsc.submitCount(textOf.get(id)!))).toEqual(ids.map((id) => (id === alreadySent ? 0 : 1)));
  });

  it('counts and warns of a job whose messages this database does not hold (another Meld on the same Redis database), and goes on', async () => {
    const smsc = await startCountingSmsc();
    const delivery = await startAs('delivery', smsc);
    const unknownTotal = async () => {
      const text = await (await fetch(`${delivery.base}/metrics`)).text();
      return Number(/^meld_messaging_send_unknown_messages_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? 0);
    };
    const before = await unknownTotal();
    const jobId = randomUUID();
    await queue.add('send', { messages: [{ smsId: randomUUID() }, { smsId: randomUUID() }] }, { jobId });
    await waitFor('the stranger job taken', async () => (await unknownTotal()) === before + 2, { timeoutMs: 10_000 });
    // Nothing of it was submitted, and the job is done with: nothing here can send it.
    expect(smsc.stats().submitted).toBe(0);
    await waitFor('the job completed', async () => ['completed', 'unknown'].includes(await queue.getJobState(jobId)), { timeoutMs: 5_000 });
  });
});
