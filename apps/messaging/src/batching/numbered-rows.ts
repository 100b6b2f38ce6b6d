/**
 * Rows for one multi-row statement, as the JSON of `jsonb_to_recordset($1::jsonb) AS v(…, n int)`:
 * each row carries its position `n`, so `ORDER BY v.n` inserts them in order (bigserial ids
 * and `seq` then follow the caller's order, ADR 0202).
 */
export function numberedRows(rows: ReadonlyArray<Record<string, unknown>>): string {
  return JSON.stringify(rows.map((row, n) => ({ ...row, n })));
}
