import { AttributeSpecSchema, EventParameterSpecSchema, EventTypeSpecSchema, envelope } from '@meld/api';
import { z } from 'zod';

const Count = z.object({ count: z.int() });

export const StreamAttributeListSchema = envelope(z.array(AttributeSpecSchema), Count).meta({ id: 'StreamAttributeList' });
export const StreamEventTypeListSchema = envelope(z.array(EventTypeSpecSchema), Count).meta({ id: 'StreamEventTypeList' });
export const StreamEventParameterListSchema = envelope(z.array(EventParameterSpecSchema), z.object({ eventType: EventTypeSpecSchema })).meta({
  id: 'StreamEventParameterList',
});
