/**
 * The sms bench's floor (ADR 0320): the least a Node process does for a direct SMS that is
 * stored before its 201 and reported by webhook at each status change, with the libraries Meld
 * uses and none of its framework or features. Per message: one INSERT then one BullMQ add per
 * request (answered 201 after both), the worker's read of the row, `submit_sm`, an UPDATE at
 * `submit_sm_resp` and one at the receipt (found by SMSC id), and a signed webhook POST after
 * each UPDATE: two per message, none for the initial `enqueued` the 201 answers (ADR 0351, as
 * Meld). No Fastify, Nest, principal, token, rate limit, consent, sender,
 * price, funds, Idempotency-Key, history, outbox, Kafka, timeline event, durable or ordered
 * webhook retries, logs or metrics: whatever Meld costs above it is the price of those.
 *
 * Run as its own process (`node -r @swc-node/register bench/lib/bare-sms.ts`) with PORT,
 * MELD_POSTGRES_URL (a database with the table `bareSmsTable` creates), MELD_REDIS_URL,
 * BARE_QUEUE (a queue name no one else uses), BARE_SMSC_PORT, BARE_WEBHOOK_URL and
 * BARE_WEBHOOK_SECRET; BARE_ROLE `api` (requests only), `delivery` (worker and receipts only)
 * or `all` (default). `GET /readyz` answers 200 once the SMPP session is bound (or at once as `api`).
 */
import { createHmac, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Queue, Worker } from 'bullmq';
import Redis from 'ioredis';
import { Pool as PgPool } from 'pg';
import { Pool as HttpPool } from 'undici';

/** The floor's one table, created by the bench in its own database. */
export const bareSmsTable = `CREATE TABLE bare_sms (id uuid PRIMARY KEY, destination text NOT NULL, text text NOT NULL, status text NOT NULL DEFAULT 'enqueued',
  smsc_id text, created_at timestamptz NOT NULL DEFAULT now(), sent_at timestamptz, delivered_at timestamptz);
  CREATE INDEX bare_sms_smsc_id ON bare_sms (smsc_id) WHERE smsc_id IS NOT NULL`;

const smpp = require('smpp');

function main(): void {
  const env = process.env;
  const role = env.BARE_ROLE ?? 'all';
  const pg = new PgPool({ connectionString: env.MELD_POSTGRES_URL, max: 10 });
  const connection = () => new Redis(env.MELD_REDIS_URL!, { maxRetriesPerRequest: null });
  const webhooks = new HttpPool(new URL(env.BARE_WEBHOOK_URL!).origin, { connections: 16, keepAliveTimeout: 30_000 });
  const webhookPath = new URL(env.BARE_WEBHOOK_URL!).pathname;
  const secret = env.BARE_WEBHOOK_SECRET!;

  /** One POST per status change, signed as Meld-Signature is (HMAC-SHA256 of timestamp and body); not retried. */
  const report = (id: string, status: string) => {
    const at = new Date().toISOString();
    const body = JSON.stringify({ id, status, at });
    const t = Math.floor(Date.now() / 1000);
    const signature = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
    webhooks
      .request({ method: 'POST', path: webhookPath, headers: { 'content-type': 'application/json', 'meld-signature': `t=${t},v1=${signature}` }, body })
      .then((res) => res.body.dump())
      .catch(() => undefined);
  };

  let ready = role === 'api';
  if (role !== 'api') {
    const session = smpp.connect({ url: `smpp://127.0.0.1:${env.BARE_SMSC_PORT}` });
    session.bind_transceiver({ system_id: 'bare', password: 'bare' }, (pdu: { command_status: number }) => {
      if (pdu.command_status !== 0) throw new Error('bind refused');
      ready = true;
    });
    /** A receipt can overtake the commit of its `sent`: looked up again a few times. */
    const delivered = async (smscId: string, tries = 20): Promise<void> => {
      const { rows } = await pg.query({ name: 'delivered', text: `UPDATE bare_sms SET status = 'delivered', delivered_at = now() WHERE smsc_id = $1 RETURNING id`, values: [smscId] });
      if (rows[0]) return report(rows[0].id, 'delivered');
      if (tries > 0) setTimeout(() => void delivered(smscId, tries - 1), 50);
    };
    session.on('deliver_sm', (pdu: { receipted_message_id?: string; response(): unknown }) => {
      session.send(pdu.response());
      if (pdu.receipted_message_id) void delivered(pdu.receipted_message_id);
    });
    new Worker(
      env.BARE_QUEUE!,
      async (job) => {
        const { rows } = await pg.query({ name: 'load', text: `SELECT destination, text FROM bare_sms WHERE id = $1`, values: [job.data.id] });
        const smscId = await new Promise<string>((resolve, reject) =>
          session.submit_sm({ source_addr: 'BARE', destination_addr: rows[0].destination.slice(1), registered_delivery: 1, short_message: rows[0].text }, (pdu: { command_status: number; message_id: string }) =>
            pdu.command_status === 0 ? resolve(pdu.message_id) : reject(new Error(`submit_sm ${pdu.command_status}`)),
          ),
        );
        await pg.query({ name: 'sent', text: `UPDATE bare_sms SET status = 'sent', smsc_id = $2, sent_at = now() WHERE id = $1`, values: [job.data.id, smscId] });
        report(job.data.id, 'sent');
      },
      { connection: connection(), concurrency: 50 },
    );
  }

  const queue = new Queue(env.BARE_QUEUE!, { connection: connection() });
  const server = createServer((req, res) => {
    if (req.method === 'GET') return void res.writeHead(ready ? 200 : 503).end();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const destination = decodeURIComponent(req.url!.split('/').pop()!);
      const text: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8')).text;
      if (typeof text !== 'string' || role === 'delivery') return void res.writeHead(400).end();
      const id = randomUUID();
      pg.query({ name: 'insert', text: `INSERT INTO bare_sms (id, destination, text) VALUES ($1, $2, $3)`, values: [id, destination, text] })
        .then(() => queue.add('send', { id }, { removeOnComplete: true }))
        .then(() => void res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ entity: { id, status: 'enqueued' } })))
        .catch(() => void res.writeHead(503).end());
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(Number(env.PORT), '127.0.0.1');
  process.once('SIGTERM', () => process.exit(0));
}

if (require.main === module) main();
