import { envelope, timestamp } from '@meld/api';
import { z } from 'zod';

export const AudienceEventSchema = z
  .object({
    id: z.string().describe('the `_event_id` the data source sent'),
    type: z.string().describe('event type uid'),
    date: timestamp().describe('`_event_date` (reception time when the source sent none)'),
    receivedAt: timestamp().describe('when ingest accepted the event'),
    parameters: z.record(z.string(), z.unknown()).describe('`_event_parameters` as sent'),
    dataSourceId: z.string().describe('data source that sent the event'),
  })
  .meta({ id: 'AudienceEvent' });

export const AudienceEventListSchema = envelope(
  z.array(AudienceEventSchema),
  z.object({
    audienceId: z.string().describe('the audience contact read: the survivor when the path named an absorbed id'),
    start: z.int().min(0),
    limit: z.int().min(1).max(500),
    count: z.int().min(0).describe('events in this page'),
    total: z.int().min(0).describe('events within the look-back'),
    lookBackDays: z.int().describe("days of history the organization's plan allows: s 30, m 90, l 180, xl 365"),
    since: timestamp().describe('oldest event date included'),
  }),
).meta({ id: 'AudienceEventList' });
