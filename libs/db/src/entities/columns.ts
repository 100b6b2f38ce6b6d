import type { ValueTransformer } from 'typeorm';

/** Postgres numeric arrives as a string; money fits a JS number at our precision (4 decimals). */
export const numericTransformer: ValueTransformer = {
  to: (v?: number | null) => v,
  from: (v?: string | null) => (v === null || v === undefined ? v : Number(v)),
};
