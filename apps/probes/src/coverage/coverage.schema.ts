import { z } from 'zod';

export const CoverageBody = z
  .strictObject({
    version: z.unknown().optional().describe('audience filter version: `0.0.1` (the only one)'),
    root: z.unknown().optional().describe('audience filter root (system design §4), as for `/audience/count`; absent: the whole audience. A call with a root is computed live, never cached'),
    datasource: z.string().min(1).optional().describe('narrows to contacts this data source contributed to (membership, not provenance): its connector name, uid or id'),
    attributes: z.array(z.string().min(1)).min(1).max(500).optional().describe('attribute UIDs to profile, measured even when hidden, internal or an identity (their top values are then withheld); default: every enabled, visible, non-internal, non-identity attribute'),
    refresh: z.boolean().optional().describe('recompute a cached profile (at most once per five minutes per project and surface)'),
  })
  .meta({ id: 'CoverageRequest' });
export type CoverageInput = z.infer<typeof CoverageBody>;

const int = () => z.int().min(0);
const TopValueSchema = z
  .object({
    value: z.union([z.string(), z.number(), z.boolean()]),
    count: int().describe('contacts holding the value, projected on the denominator'),
    observedCount: int().describe('scanned contacts holding it'),
    approximate: z.boolean(),
    reliable: z.boolean().describe('observedCount ≥ minReliableCount (always true unsampled)'),
    countError: int().describe('95% half-width of count (0 unsampled)'),
  })
  .meta({ id: 'CoverageTopValue' });

export const CoverageAttributeSchema = z
  .object({
    uid: z.string(),
    label: z.string(),
    type: z.string(),
    multivalue: z.boolean(),
    fillRate: z.number().min(0).max(1).describe('filled share of the denominator, four decimals'),
    fillRateError: z.number().min(0).describe('95% half-width of fillRate: its distance to the farther side of the 95% Wilson score interval (fillRateInterval), with the finite-population correction (ADR 0221); 0 unsampled'),
    fillRateInterval: z.tuple([z.number(), z.number()]).describe('95% Wilson score interval of fillRate'),
    filled: int().describe('fillRate projected on the denominator'),
    filledError: int().describe('95% half-width of filled'),
    observedFilled: int(),
    approximate: z.boolean(),
    reliable: z.boolean(),
    distinctValues: int().nullable().describe('distinct values over every contact of the denominator (uniqCombined sketch), null when not measured'),
    topValues: z.array(TopValueSchema).max(10).optional(),
    topValuesOther: int().optional().describe('contacts holding a value outside the listed ones'),
    topValuesOmitted: z.string().optional().describe('why top values are withheld (probe rule 7); never means empty'),
    topValuesSemantics: z.string().optional(),
    stats: z
      .object({
        avg: z.number().nullable().describe('null when no scanned contact has a value, or when withheld (avgOmitted)'),
        avgOmitted: z.string().optional().describe("why avg is not reported: the project's data mode withholds contact values"),
        min: z.number().nullable().optional(),
        max: z.number().nullable().optional(),
        extremesOmitted: z.string().optional().describe('why min and max are not reported: sampled (probe rule 8), or withheld by the data mode'),
      })
      .optional(),
    summary: z.string(),
  })
  .meta({ id: 'CoverageAttribute' });

const DataSourceRef = z.object({ id: z.string(), uid: z.string(), name: z.string(), connector: z.string() });

export const CoverageSchema = z
  .object({
    metadata: z.object({
      computedAt: z.string(),
      denominator: z.object({ count: int(), definition: z.string() }),
      sampling: z.object({
        applied: z.boolean(),
        fraction: z.number(),
        buckets: int(),
        band: z.string(),
        scanned: int(),
        scaled: z.boolean(),
        minReliableCount: int(),
      }),
      attributes: z.array(CoverageAttributeSchema),
      cached: z.boolean(),
      computedAgo: int().describe('seconds since computedAt'),
      datasource: z.object({ query: z.string(), matched: z.array(DataSourceRef), meaning: z.string() }).optional(),
      truncated: z.object({ limit: int(), attributes: z.array(z.string()) }).optional(),
      refreshDeclined: z.boolean().optional(),
      nextRefreshIn: int().optional().describe('seconds until a refresh is accepted'),
      summary: z.string(),
    }),
  })
  .meta({ id: 'Coverage' });
export type Coverage = z.infer<typeof CoverageSchema>['metadata'];
