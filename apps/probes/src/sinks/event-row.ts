// The events row lives in libs/clickhouse, where the bench can use it too (ADR 0228); importers
// here move to '@meld/clickhouse' once the probes work in flight has landed.
export { type EventRow, toEventRow } from '@meld/clickhouse';
