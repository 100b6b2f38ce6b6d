import { z } from 'zod';

export const VolumesBody = z
  .strictObject({
    version: z.unknown().optional().describe('audience filter version: `0.0.1` (the only one)'),
    root: z.unknown().optional().describe('audience filter root (system design §4), as for `/audience/count`: only events of the contacts it matches count. A call with a root is computed live, never cached'),
    datasource: z.string().min(1).optional().describe('keeps events this data source produced (probe rule 6): its connector name, uid or id'),
    // No upper bound of its own: any longer window is clamped by the plan look-back and reported (spec Limits, ADR 0166).
    window: z.int().min(1).optional().describe('days, ending now; default 90 / 30 / 15 by audience size, clamped by the plan look-back'),
    event: z.string().min(1).optional().describe('an event type uid: adds its parameter values, sampled by contact above 10,000 contacts'),
    refresh: z.boolean().optional().describe('recompute a cached answer (at most once per five minutes per project and surface)'),
  })
  .meta({ id: 'EventVolumesRequest' });
export type VolumesInput = z.infer<typeof VolumesBody>;

const int = () => z.int().min(0);

const EventTypeVolume = z
  .object({
    uid: z.string(),
    label: z.string(),
    count: int().describe('distinct events in the type’s window (exact)'),
    received: z.boolean().describe('count > 0: false means nothing arrived in the queried window only (probe rule 12)'),
    lastSeenAt: z.string().nullable().describe('date of the latest event in the window; null when none (probe rule 12), or when withheld (lastSeenAtOmitted)'),
    lastSeenAtOmitted: z.string().optional().describe("why lastSeenAt is not reported: the project's data mode withholds contact data (blocked), where it could be one contact's last event time (ADR 0164)"),
    effectiveWindowDays: int().describe('window.days, or the type’s retention when shorter'),
    windowLimitedByRetention: z.boolean(),
    retentionDays: int().nullable().describe('days the type is kept; null follows the plan look-back'),
  })
  .meta({ id: 'EventTypeVolume' });

const ParameterValue = z
  .object({
    value: z.union([z.string(), z.number(), z.boolean()]),
    name: z.union([z.string(), z.number(), z.boolean()]).nullable().optional().describe('id parameters paired with a name parameter: the name most often seen with this id (probe rule 13)'),
    count: int().describe('events carrying the value, projected on the contacts'),
    observedCount: int().describe('sampled events carrying it'),
    observedContacts: int().describe('sampled contacts with such an event'),
    approximate: z.boolean(),
    reliable: z.boolean().describe('observedContacts ≥ minReliableCount (always true unsampled)'),
    countError: int().describe('95% half-width of count, from the variance of per-contact sums: the far side of its score interval (ADR 0247; 0 unsampled)'),
  })
  .meta({ id: 'EventParameterValue' });

const Parameter = z
  .object({
    uid: z.string(),
    title: z.string(),
    dataType: z.string(),
    nameParameter: z.string().optional().describe('an id parameter: the parameter naming what it identifies (probe rule 13, ADR 0167)'),
    idParameter: z.string().optional().describe('a name parameter: the id parameter to filter on'),
    values: z.array(ParameterValue).max(10).optional(),
    other: int().optional().describe('events carrying a value outside the listed ones (per value of a multivalue parameter), projected'),
    truncated: z.boolean().optional().describe('more distinct values were seen than are listed'),
    valuesOmitted: z.string().optional().describe('why values are not listed'),
  })
  .meta({ id: 'EventParameterValues' });

export const VolumesSchema = z
  .object({
    metadata: z.object({
      computedAt: z.string(),
      window: z.object({
        days: int(),
        requestedDays: int(),
        band: z.string(),
        clamped: z.boolean(),
        clampedBy: z.literal('plan').nullable(),
        planLookBackDays: int(),
        from: z.string(),
        to: z.string(),
        anchor: z.string(),
      }),
      sampling: z.object({ applied: z.literal(false), covers: z.string(), reason: z.string(), parameterValues: z.string() }),
      eventTypes: z.array(EventTypeVolume),
      event: z
        .object({
          uid: z.string(),
          count: int(),
          lastSeenAt: z.string().nullable().describe('as an event type’s: null when none in the window, or when withheld (lastSeenAtOmitted)'),
          lastSeenAtOmitted: z.string().optional(),
          parameters: z.array(Parameter),
          parametersOmitted: z.string().optional(),
          sampling: z.object({
            applied: z.boolean(),
            fraction: z.number(),
            buckets: int(),
            band: z.string(),
            scaled: z.boolean(),
            minReliableCount: int(),
            unit: z.literal('contacts'),
            scanned: int().describe('sampled contacts (of the root, if any)'),
            population: int().describe('contacts whose events are read (of the root, if any)'),
          }),
        })
        .optional(),
      datasource: z.object({ query: z.string(), matched: z.array(z.object({ id: z.string(), uid: z.string(), name: z.string(), connector: z.string() })), meaning: z.string() }).optional(),
      cached: z.boolean(),
      computedAgo: int(),
      refreshDeclined: z.boolean().optional(),
      nextRefreshIn: int().optional(),
      summary: z.string(),
    }),
  })
  .meta({ id: 'EventVolumes' });
export type Volumes = z.infer<typeof VolumesSchema>['metadata'];
export type ComputedVolumes = Omit<Volumes, 'cached' | 'computedAgo' | 'refreshDeclined' | 'nextRefreshIn'>;
export type EventParameterEntry = NonNullable<Volumes['event']>['parameters'][number];
