import type { SmsStatusChange } from '@meld/contracts';
import { webhookReport } from './webhook-report';

const change = (over: Partial<SmsStatusChange> = {}): SmsStatusChange => ({
  schemaVersion: 1,
  projectId: '00000000-0000-4000-8000-0000000000ff',
  smsId: '2f1c7a7e-9d3b-4c53-8f0e-4b8a1f0c2d11',
  audienceId: null,
  status: 'sent',
  messagesCount: 2,
  at: '2026-11-27T10:00:00.000Z',
  ...over,
});

describe('webhookReport (ADR 0323)', () => {
  it('is the payload of system design §4, in its field order, error only when there is one', () => {
    expect(Object.keys(JSON.parse(webhookReport(change()).body))).toEqual(['id', 'status', 'audienceId', 'messagesCount', 'at']);
    expect(JSON.parse(webhookReport(change({ status: 'failed', error: 'SMSC refused: 0x0b' })).body)).toEqual({
      id: change().smsId, status: 'failed', audienceId: null, messagesCount: 2, at: change().at, error: 'SMSC refused: 0x0b',
    });
  });

  it('names its event by the message and the status: a uuid (version 5 layout), the same on every redelivery, another for each status', () => {
    const { eventId } = webhookReport(change());
    expect(eventId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(webhookReport(change({ at: '2026-11-27T10:00:05.000Z' })).eventId).toBe(eventId);
    expect(webhookReport(change({ status: 'delivered' })).eventId).not.toBe(eventId);
    expect(webhookReport(change({ smsId: '3f1c7a7e-9d3b-4c53-8f0e-4b8a1f0c2d11' })).eventId).not.toBe(eventId);
  });
});
