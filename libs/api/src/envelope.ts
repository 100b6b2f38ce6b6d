import { z } from 'zod';

/** Every success body is `{ entity, metadata }` (product spec, "What the service does"). */
export function envelope<E extends z.ZodType, M extends z.ZodType>(entity: E, metadata: M) {
  return z.object({ entity, metadata });
}

export function entityOnly<E extends z.ZodType>(entity: E) {
  return z.object({ entity });
}

/** Timestamp with offset, e.g. `2026-11-21T10:00:00.000+00:00`. */
export const timestamp = () => z.iso.datetime({ offset: true });
