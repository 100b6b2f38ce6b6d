import { type Json, principalHeader } from '@meld/fixtures';
import { waitFor } from '@meld/testing';
import { seedContact, seedSmsTenancy, startMessaging } from './app.fixture';
import { WebhookReceiver } from './webhook-receiver';

type Started = Awaited<ReturnType<typeof startMessaging>>;

/** Starts the app with MELD_MESSAGING_ROLE set while it boots (the role is read at bootstrap). */
async function startAs(role: 'api' | 'delivery'): Promise<Started> {
  process.env.MELD_MESSAGING_ROLE = role;
  try {
    return await startMessaging();
  } finally {
    delete process.env.MELD_MESSAGING_ROLE;
  }
}

describe('MELD_MESSAGING_ROLE: an api process stores and queues, a delivery process submits (ADR 0253; real Postgres, Redis, SMSC simulators)', () => {
  const started: Started[] = [];
  const receiver = new WebhookReceiver();
  afterAll(async () => {
    await receiver.stop();
    for (const s of started.reverse()) {
      await s.app.close();
      await s.smsc.close();
    }
  });

  it('a message sent to the api process is submitted and reported only once a delivery process runs, and ends delivered', async () => {
    const api = await startAs('api');
    started.push(api);
    const t = await seedSmsTenancy(api.db);
    await receiver.start();
    await api.db.query(`INSERT INTO webhooks (organization_id, kind, url, secret) VALUES ($1, 'sms-status', $2, 'whsec_cm9sZXM=')`, [t.organization.id, receiver.url]);
    const audienceId = await seedContact(api.db, t.project.id, { _user_id: 'u-roles', _phone_mobile: '+447400123477' });
    const url = `/v1/project/${t.project.uid}/channel/sms/sms/direct/default/${audienceId}`;
    const res = await fetch(`${api.base}${url}`, {
      method: 'POST',
      headers: { ...principalHeader(t, { scopes: ['PROJECT_DIRECT_WRITE'] }, { app: 'messaging', method: 'POST', url }), 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Your code is 4821' }),
    });
    expect(res.status).toBe(201);
    const smsId = ((await res.json()) as Json).entity.id as string;
    const statusOf = async () => (await api.db.query(`SELECT status FROM sms_messages WHERE id = $1`, [smsId]))[0].status;

    await new Promise((r) => setTimeout(r, 1500));
    expect([await statusOf(), api.smsc.stats().sessions, api.smsc.stats().submitted]).toEqual(['enqueued', 0, 0]);
    // The api's transaction writes `enqueued`'s history row and no webhook report (ADR 0351): the 201 carried it.
    const history = await api.db.query(`SELECT status FROM sms_status_history WHERE sms_id = $1`, [smsId]);
    const owed = await api.db.query(`SELECT count(*)::int AS n FROM sms_webhook_outbox WHERE key = $1`, [smsId]);
    expect([history.map((r: Json) => r.status), owed[0].n, receiver.about(smsId)]).toEqual([['enqueued'], 0, []]);

    const delivery = await startAs('delivery');
    started.push(delivery);
    expect(await waitFor('delivered by the delivery process', async () => ((await statusOf()) === 'delivered' ? true : undefined), { timeoutMs: 15_000 })).toBe(true);
    expect(delivery.smsc.stats().submitted).toBeGreaterThanOrEqual(1);
    expect(api.smsc.stats().submitted).toBe(0);
    const reports = await waitFor('two reports', async () => (receiver.about(smsId).length >= 2 ? receiver.about(smsId) : undefined), { timeoutMs: 15_000 });
    expect(reports.map((r) => r.json.status)).toEqual(['sent', 'delivered']);
  });
});
