import { type Json, principalHeader } from '@meld/fixtures';
import { seedContact, seedSmsTenancy, startMessaging } from './app.fixture';
import { WebhookReceiver } from './webhook-receiver';

/**
 * The messaging app with its SMSC simulator, an SMS tenancy whose organization's
 * `sms-status` webhook points at a receiver on loopback, and `send(phone)` that sends a
 * direct SMS to a new contact with that mobile and answers the message id.
 */
export async function startWithWebhook(secret: string) {
  const started = await startMessaging();
  const { db, base } = started;
  const receiver = new WebhookReceiver();
  await receiver.start();
  const t = await seedSmsTenancy(db);
  await db.query(`INSERT INTO webhooks (organization_id, kind, url, secret) VALUES ($1, 'sms-status', $2, $3)`, [t.organization.id, receiver.url, secret]);

  const send = async (phone: string, text = 'Your code is 4821'): Promise<string> => {
    const audienceId = await seedContact(db, t.project.id, { _user_id: `u-${phone}-${Math.random()}`, _phone_mobile: phone });
    const url = `/v1/project/${t.project.uid}/channel/sms/sms/direct/default/${audienceId}`;
    const res = await fetch(`${base}${url}`, {
      method: 'POST',
      headers: { ...principalHeader(t, { scopes: ['PROJECT_DIRECT_WRITE'] }, { app: 'messaging', method: 'POST', url }), 'content-type': 'application/json' },
      body: JSON.stringify({ text }),
    });
    const body = (await res.json()) as Json;
    if (res.status !== 201) throw new Error(`send answered ${res.status}: ${JSON.stringify(body)}`);
    return body.entity.id;
  };
  const close = async () => {
    await started.app.close();
    await started.smsc.close();
    await receiver.stop();
  };
  return { app: started.app, db, t, receiver, smsc: started.smsc, send, close };
}
