import { QueryFailedError } from 'typeorm';

/**
 * True when Postgres refused a write for a unique index (SQLSTATE 23505). Use cases check
 * for duplicates first to answer nicely, and rely on this for the race between two writers.
 */
export function isUniqueViolation(err: unknown): boolean {
  return err instanceof QueryFailedError && (err.driverError as { code?: string } | undefined)?.code === '23505';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids in paths are checked before they reach Postgres, where a malformed uuid is an error, not a miss. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
