import { ATTRIBUTE_TYPES, EVENT_CATEGORIES, type SystemEventParameter, type SystemEventType } from '@meld/contracts';
import { z } from 'zod';
import type { AttributeEntity, EventParameterEntity, EventTypeEntity } from '@meld/db';

/** One attribute of the project catalogue (`/specs/attributes`, `/stream/specs/attributes`). */
export const AttributeSpecSchema = z
  .object({
    uid: z.string(),
    label: z.string(),
    type: z.enum(ATTRIBUTE_TYPES),
    multivalue: z.boolean(),
    enabled: z.boolean(),
    visible: z.boolean(),
    internal: z.boolean().describe('maintained by Meld (e.g. `_datasources`); never written through ingest'),
    unique: z.boolean().describe('can identify a contact, so it may be a merging attribute'),
    reserved: z.boolean().describe('a `_` attribute seeded into every project'),
  })
  .meta({ id: 'AttributeSpec' });
export type AttributeSpecResource = z.infer<typeof AttributeSpecSchema>;

/** Entry of the event catalogue (spec: Event type spec). */
export const EventTypeSpecSchema = z
  .object({
    uid: z.string().describe('identifier used in filters and as the `event` probe argument'),
    name: z.string(),
    category: z.enum(EVENT_CATEGORIES).describe('grouping only, not for filtering'),
    attribution: z.boolean(),
    automation: z.boolean().describe('can trigger an automation'),
    important: z.boolean().describe('headline event on the contact timeline'),
    system: z
      .literal(true)
      .optional()
      .describe('written by Meld itself (SMS statuses, clicks and unsubscribes, uids starting with `_`): filtered on and read as any type, never sent by a data source nor edited'),
  })
  .meta({ id: 'EventTypeSpec' });
export type EventTypeSpec = z.infer<typeof EventTypeSpecSchema>;

/** Spec: Event parameter spec. In filters the key is `<event_type_uid>.<parameter>`. */
export const EventParameterSpecSchema = z
  .object({
    parameter: z.string(),
    title: z.string(),
    dataType: z.enum(ATTRIBUTE_TYPES),
    required: z.boolean(),
    multiValue: z.int().describe('most values the parameter may carry; 1 means single-valued'),
    maxLength: z.int().nullable().describe('strings only'),
  })
  .meta({ id: 'EventParameterSpec' });
export type EventParameterSpec = z.infer<typeof EventParameterSpecSchema>;

export function toAttributeSpec(a: AttributeEntity): AttributeSpecResource {
  return {
    uid: a.uid,
    label: a.label,
    type: a.type,
    multivalue: a.multivalue,
    enabled: a.enabled,
    visible: a.visible,
    internal: a.internal,
    unique: a.unique,
    reserved: a.reserved,
  };
}

export function toEventTypeSpec(e: EventTypeEntity): EventTypeSpec {
  return {
    uid: e.uid,
    name: e.name,
    category: e.category as EventTypeSpec['category'],
    attribution: e.attribution,
    automation: e.automation,
    important: e.important,
  };
}

export function toEventParameterSpec(p: EventParameterEntity): EventParameterSpec {
  return {
    parameter: p.parameter,
    title: p.title,
    dataType: p.dataType as EventParameterSpec['dataType'],
    required: p.required,
    multiValue: p.multiValue,
    maxLength: p.maxLength,
  };
}

/** A type Meld writes itself (ADR 0157), listed in the product API's catalogue (ADR 0336). */
export function systemEventTypeSpec(t: SystemEventType): EventTypeSpec {
  return { uid: t.uid, name: t.name, category: 'marketing', attribution: false, automation: false, important: false, system: true };
}

export function systemEventParameterSpec(p: SystemEventParameter): EventParameterSpec {
  return { parameter: p.parameter, title: p.title, dataType: p.dataType as EventParameterSpec['dataType'], required: p.parameter === 'smsId', multiValue: 1, maxLength: null };
}
