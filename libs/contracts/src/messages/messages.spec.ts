import { automationTrigger, eventAccepted, eventsMessage, isEventsErased } from './index';

const event = {
  schemaVersion: 1,
  projectId: 'p',
  dataSourceId: 'd',
  userId: 'u',
  eventId: 'e-1',
  eventType: 'signup',
  eventDate: '2026-11-21T10:00:00.000Z',
  receivedAt: '2026-11-21T10:00:00.000Z',
  parameters: { plan: 'pro' },
};

describe('meld.events.v1 and meld.automation-triggers.v1 messages', () => {
  it('an event with or without the automation flag is an event; an erase marker is not', () => {
    expect(eventsMessage.parse(event)).toEqual(event);
    expect(eventsMessage.parse({ ...event, automation: true })).toEqual({ ...event, automation: true });
    const erase = { schemaVersion: 1, kind: 'erase', projectId: 'p', dataSourceId: 'd', userId: 'u', version: 4, at: '2026-11-21T10:00:00Z' };
    expect(isEventsErased(eventsMessage.parse(erase))).toBe(true);
    expect(isEventsErased(eventsMessage.parse(event))).toBe(false);
    // An erase marker never passes as an event (consumers that only know events dead-letter it).
    expect(eventAccepted.safeParse(erase).success).toBe(false);
    expect(eventsMessage.safeParse({ ...erase, kind: 'purge' }).success).toBe(false);
  });

  it('a trigger names a resolved audience contact (a uuid), not a source-contact key', () => {
    const trigger = { ...event, audienceId: '0b7e3f4e-9d1c-4a55-8f0e-2c1d3b4a5e6f' };
    expect(automationTrigger.parse(trigger)).toEqual(trigger);
    expect(automationTrigger.safeParse({ ...trigger, audienceId: 'p/d/u' }).success).toBe(false);
  });
});
