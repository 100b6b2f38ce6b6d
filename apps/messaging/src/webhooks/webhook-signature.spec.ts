import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { signatureHeaders, standardWebhooksKey } from './webhook-signature';

describe('signatureHeaders (system design §4, ADR 0155)', () => {
  const body = '{"id":"m1","status":"sent"}';
  const now = new Date();

  it('signs "t.body" with the secret for Meld-Signature', () => {
    const h = signatureHeaders('evt-1', body, 'a-secret-of-16-chars', new Date(1_700_000_000_000));
    const hex = createHmac('sha256', 'a-secret-of-16-chars').update(`1700000000.${body}`).digest('hex');
    expect(h['meld-signature']).toBe(`t=1700000000,v1=${hex}`);
    expect(h['webhook-timestamp']).toBe('1700000000');
  });

  it('a generated whsec_ secret verifies with the library default constructor', () => {
    const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
    expect(new Webhook(secret).verify(body, signatureHeaders('evt-2', body, secret, now))).toEqual({ id: 'm1', status: 'sent' });
  });

  it("an operator's own secret verifies with format raw", () => {
    const secret = 'my-own-secret-0123456789';
    expect(standardWebhooksKey(secret)).toEqual(Buffer.from(secret));
    expect(new Webhook(secret, { format: 'raw' }).verify(body, signatureHeaders('evt-3', body, secret, now))).toEqual({ id: 'm1', status: 'sent' });
  });
});
