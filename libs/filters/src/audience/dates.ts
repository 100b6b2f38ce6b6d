/**
 * Dates in filters: the forms ingest accepts (apps/ingest attribute-rules), i.e. an ISO date
 * `YYYY-MM-DD` (a whole UTC day) or an ISO 8601 date-time with an offset. Everything compares
 * in whole unix seconds, UTC, like the stored values (audience_contacts num_values; event
 * parameters are parsed the same way in SQL, see sql-dates.ts).
 */
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

export const DAY_SECONDS = 86_400;

export interface FilterDate {
  /** Unix seconds (UTC midnight for a date). */
  seconds: number;
  /** A date without a time: it stands for the whole UTC day. */
  wholeDay: boolean;
}

function validDay(s: string): boolean {
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/** The date a filter value names, or null when it is neither an ISO date nor an ISO date-time with an offset. */
export function parseFilterDate(value: string): FilterDate | null {
  if (DATE.test(value)) return validDay(value) ? { seconds: Date.parse(`${value}T00:00:00Z`) / 1000, wholeDay: true } : null;
  if (!DATETIME.test(value) || !validDay(value.slice(0, 10))) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : { seconds: Math.floor(ms / 1000), wholeDay: false };
}

/** First second of the value (its day's midnight for a date). */
export function startOf(d: FilterDate): number {
  return d.seconds;
}

/** Last second of the value (23:59:59 of its day for a date): inclusive upper bounds. */
export function endOf(d: FilterDate): number {
  return d.wholeDay ? d.seconds + DAY_SECONDS - 1 : d.seconds;
}
