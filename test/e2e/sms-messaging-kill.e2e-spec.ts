import { killMidBurst } from './support/sms-kill';

// Issue 17: SIGKILL of messaging during a burst of direct SMS (ADR 0268). No SMS answered 201 is
// lost, a request the kill cut is retried safely with its Idempotency-Key, and a message goes
// twice to the SMSC only when the killed process had submitted it and died before recording `sent`.
jest.setTimeout(180_000);

it('messaging SIGKILLed mid-burst and restarted: every acknowledged SMS delivered, none submitted twice but the documented case', async () => {
  const outcome = await killMidBurst({ roles: ['all'], victim: 'all', name: 'all' });
  console.log(`messaging kill: ${JSON.stringify(outcome)}`);
  expect(outcome.acknowledged).toBe(400);
});
