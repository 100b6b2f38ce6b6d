/**
 * Size bounds of one filter. They keep a filter far from ClickHouse's own limits (18.16 parses
 * at most 256 KiB of query text, `max_query_size`) while leaving room for any filter a person
 * builds by hand or a UI generates (hundreds of zip codes in one `matches-string`).
 */
export const AUDIENCE_FILTER_LIMITS = {
  /** Nesting of groups; the root is depth 1. */
  maxDepth: 10,
  /** Children of one group or group_event. */
  maxChildren: 100,
  /** Nodes in the whole tree. */
  maxNodes: 200,
  /** Values of one condition. */
  maxValues: 500,
  /** Values in the whole tree. */
  maxTotalValues: 5_000,
  /** Characters of one string value (ingest's own limit for a string attribute). */
  maxStringLength: 2_048,
  /** Characters of all string values together. */
  maxTotalStringLength: 50_000,
  /** `in-last-days` and `lastDays` (100 years). */
  maxDays: 36_500,
  /** `count.value`. */
  maxCount: 1_000_000,
  /** Query text compiled from one filter, under 18.16's 256 KiB `max_query_size`. */
  maxSqlBytes: 240 * 1024,
} as const;
