import { killMidBurst } from './support/sms-kill';

// Issue 17 with MELD_MESSAGING_ROLE api + delivery (ADR 0253): the delivery process SIGKILLed
// mid-burst while the api process keeps answering (ADR 0268).
jest.setTimeout(180_000);

it('the delivery process SIGKILLed mid-burst and restarted: every acknowledged SMS delivered, none submitted twice but the documented case', async () => {
  const outcome = await killMidBurst({ roles: ['api', 'delivery'], victim: 'delivery', name: 'split' });
  console.log(`delivery kill: ${JSON.stringify(outcome)}`);
  expect(outcome).toMatchObject({ acknowledged: 400, cut: 0, cutAnswers: [] });
});
