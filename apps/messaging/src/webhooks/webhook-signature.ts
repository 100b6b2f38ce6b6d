import { createHmac } from 'node:crypto';

/** A Standard Webhooks secret as the spec writes it: `whsec_` and a base64 key. */
const STANDARD_SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/**
 * The HMAC key of the Standard Webhooks signature (ADR 0155): the decoded key of a
 * `whsec_<base64>` secret (what Meld generates), so receivers use the library's default
 * constructor; any other secret an operator chose is used as its UTF-8 bytes (receivers
 * verify with `{ format: 'raw' }`).
 */
export function standardWebhooksKey(secret: string): Buffer {
  const match = STANDARD_SECRET.exec(secret);
  return match ? Buffer.from(match[1]!, 'base64') : Buffer.from(secret, 'utf8');
}

/** The signature headers of one delivery attempt: `Meld-Signature` (system design §4) and the Standard Webhooks three. */
export function signatureHeaders(eventId: string, body: string, secret: string, now = new Date()): Record<string, string> {
  const t = Math.floor(now.getTime() / 1000);
  const meld = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  const standard = createHmac('sha256', standardWebhooksKey(secret)).update(`${eventId}.${t}.${body}`).digest('base64');
  return {
    'meld-signature': `t=${t},v1=${meld}`,
    'webhook-id': eventId,
    'webhook-timestamp': String(t),
    'webhook-signature': `v1,${standard}`,
  };
}
