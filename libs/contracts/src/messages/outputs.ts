import type { ZodType } from 'zod';
import { Topics, type TopicName } from '../topic-names';
import { audienceChange, type AudienceChange } from './audience-change';
import { automationTrigger, type AutomationTrigger } from './automation-trigger';
import { keys } from './common';
import { contactChange, type ContactChange } from './contact-change';
import { eventsMessage, type EventsMessage } from './event-accepted';
import { smsStatusChange, type SmsStatusChange } from './sms-status';

/**
 * A topic with its schema and its key, together: a producer given an output cannot pair the
 * topic with another message type or key it by something else (issue 14 item 7, ADR 0218).
 */
export interface TopicOutput<T> {
  readonly topic: TopicName;
  readonly schema: ZodType<T>;
  /** The partition key of a value (topics.json documents it). */
  readonly key: (value: T) => string;
}

function output<T>(topic: TopicName, schema: ZodType<T>, key: (value: T) => string): TopicOutput<T> {
  return Object.freeze({ topic, schema, key });
}

const sourceKey = (m: { projectId: string; dataSourceId: string; userId: string }): string => keys.sourceContact(m.projectId, m.dataSourceId, m.userId);

/** Every topic Meld writes, typed. */
export const Outputs = Object.freeze({
  contacts: output<ContactChange>(Topics.contacts, contactChange, sourceKey),
  events: output<EventsMessage>(Topics.events, eventsMessage, sourceKey),
  audience: output<AudienceChange>(Topics.audience, audienceChange, (m) => keys.audienceContact(m.projectId, m.audienceId)),
  automationTriggers: output<AutomationTrigger>(Topics.automationTriggers, automationTrigger, (m) => keys.audienceContact(m.projectId, m.audienceId)),
  smsStatus: output<SmsStatusChange>(Topics.smsStatus, smsStatusChange, (m) => keys.sms(m.projectId, m.smsId)),
});
