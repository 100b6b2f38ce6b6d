/**
 * Unix seconds of an ISO date or date-time string, computed in SQL with integer arithmetic.
 *
 * Event parameters of type date / datetime are stored as the JSON of the string ingest accepted
 * (`"2024-03-01"`, `"2024-03-01T10:00:00+05:30"`). 18.16's parseDateTimeBestEffort is no use
 * here: it returns 0 for dates before 1970 (birth dates), cannot go past 2105, and reads junk
 * such as `"junk"` as a date. So the string is checked against the exact forms ingest accepts
 * and converted with Howard Hinnant's days_from_civil, which holds for every year 0000–9999.
 * Fractions of a second are dropped (everything compares in whole seconds).
 */
import { sql, type Sql } from '@meld/clickhouse';

/** The forms of apps/ingest attribute-rules (date, or date-time with an offset), as an re2 pattern. */
export const ISO_DATE_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]{1,9})?)?(Z|[+-][0-9]{2}:?[0-9]{2}))?$';

/** `s` must be an identifier of a String known to match ISO_DATE_PATTERN (e.g. a lambda argument). */
export function isoSecondsSql(s: Sql): Sql {
  const y = sql`toInt64(substring(${s}, 1, 4))`;
  const m = sql`toInt64(substring(${s}, 6, 2))`;
  const d = sql`toInt64(substring(${s}, 9, 2))`;
  // days_from_civil with the year starting in March (leap days fall at its end), shifted by one
  // 400-year era (146097 days) so that intDiv never sees a negative year.
  const yy = sql`(${y} - (${m} <= 2) + 400)`;
  const doy = sql`(intDiv(153 * ((${m} + 9) % 12) + 2, 5) + ${d} - 1)`;
  const days = sql`(365 * ${yy} + intDiv(${yy}, 4) - intDiv(${yy}, 100) + intDiv(${yy}, 400) + ${doy} - 865565)`;
  const hh = sql`toInt64OrZero(substring(${s}, 12, 2))`;
  const mi = sql`toInt64OrZero(substring(${s}, 15, 2))`;
  const ss = sql`if(substring(${s}, 17, 1) = ':', toInt64OrZero(substring(${s}, 18, 2)), 0)`;
  // The offset is the trailing ±HH[:]MM ('' for Z and for a plain date).
  const tail = sql`extract(${s}, ${'[+-][0-9]{2}:?[0-9]{2}$'})`;
  const offset = sql`if(substring(${tail}, 1, 1) = '-', -1, 1) * (toInt64OrZero(substring(${tail}, 2, 2)) * 3600 + toInt64OrZero(substring(${tail}, length(${tail}) - 1, 2)) * 60)`;
  return sql`(${days} * 86400 + if(length(${s}) > 10, ${hh} * 3600 + ${mi} * 60 + ${ss} - ${offset}, 0))`;
}
