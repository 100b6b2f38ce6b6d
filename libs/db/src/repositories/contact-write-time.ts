/*
 * When a write to a data-source contact happened, as `source_contacts.attribute_at` and the
 * contact messages carry it (ADR 0349). Not a replica's clock: ingest runs many replicas, and
 * one whose clock is behind would stamp a later write older than an earlier one, which would
 * then lose (the upsert ignores a value older than the stored one). Postgres' clock, read once
 * the contact's row is locked, orders the writes to one contact as they were applied.
 */

/**
 * A contact's write time in a transaction that holds its row lock: Postgres' clock (`clockMs`,
 * read after the lock was taken), or 1 ms past the latest time the row holds if that is later
 * (a database clock that stepped back, a time a replica's fast clock stamped before ADR 0349),
 * so it always follows every write before it. ISO with milliseconds, the one form every stored
 * time has (`toISOString`), so the times compare as strings.
 */
export function contactWriteTime(clockMs: number, row: { attribute_at: Readonly<Record<string, unknown>> | null; deleted_at: Date | null }): string {
  let latest = row.deleted_at?.getTime() ?? -Infinity;
  for (const at of Object.values(row.attribute_at ?? {})) {
    const t = typeof at === 'string' ? Date.parse(at) : NaN;
    if (t > latest) latest = t;
  }
  return new Date(Math.max(Math.floor(clockMs), latest + 1)).toISOString();
}

/**
 * The SQL of a contact's write time in a statement on its row (`attribute_at` is the row's
 * before the statement changed it, as in an UPDATE's SET): contactWriteTime in Postgres, for
 * the delete, which reads nothing before it writes.
 */
export const CONTACT_WRITE_TIME_SQL = `GREATEST(clock_timestamp(), (SELECT max(t.value::timestamptz) + interval '1 millisecond' FROM jsonb_each_text(attribute_at) AS t), deleted_at + interval '1 millisecond')`;
