import type { z } from 'zod';
import { audienceChange } from './audience-change';
import { automationTrigger } from './automation-trigger';
import { contactChange } from './contact-change';
import { eventsMessage } from './event-accepted';
import { smsStatusChange } from './sms-status';

export * from './audience-change';
export * from './automation-trigger';
export * from './common';
export * from './contact-change';
export * from './event-accepted';
export * from './sms-status';

/** The schema of every topic's value: the only place a message shape is defined. */
export const topicSchemas = {
  'meld.contacts.v1': contactChange,
  'meld.events.v1': eventsMessage,
  'meld.audience.v1': audienceChange,
  'meld.automation-triggers.v1': automationTrigger,
  'meld.sms-status.v1': smsStatusChange,
} satisfies Record<string, z.ZodType>;
export type SchemaTopic = keyof typeof topicSchemas;
export type TopicMessage<T extends SchemaTopic> = z.infer<(typeof topicSchemas)[T]>;
export * from './outputs';
