import { AttributeSpecSchema, EventParameterSpecSchema, EventTypeSpecSchema, envelope } from '@meld/api';
import { z } from 'zod';

const Count = z.object({ count: z.int() });

export const EventTypeListSchema = envelope(z.array(EventTypeSpecSchema), Count).meta({ id: 'EventTypeSpecList' });
export const EventParameterListSchema = envelope(z.array(EventParameterSpecSchema), z.object({ eventType: EventTypeSpecSchema })).meta({
  id: 'EventParameterSpecList',
});
export const AttributeListSchema = envelope(z.array(AttributeSpecSchema), Count).meta({ id: 'AttributeSpecList' });
