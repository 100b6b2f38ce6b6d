import { type ListQuery, type ListResource, compileListQuery } from '@meld/filters';
import type { DataSource } from 'typeorm';

/** What a listing reads: `SELECT <columns> FROM <from> WHERE <scope> AND <filter>`, scope bound with `scopeParams` ($1…). */
export interface ListSource {
  columns: string;
  from: string;
  scope: string;
  scopeParams: unknown[];
}

/** One page of a listing and how many rows match the filter, in two statements run side by side (the total as `pageTotal` states it). */
export async function listPage<Row>(ds: DataSource, source: ListSource, query: ListQuery, resource: ListResource): Promise<{ rows: Row[]; total: number }> {
  const c = compileListQuery(query, resource, source.scopeParams);
  const where = `${source.scope} AND ${c.where}`;
  const [rows, counted] = await Promise.all([
    ds.query(`SELECT ${source.columns} FROM ${source.from} WHERE ${where} ORDER BY ${c.orderBy} LIMIT ${c.limit} OFFSET ${c.offset}`, c.params) as Promise<Row[]>,
    ds.query(`SELECT count(*)::int AS n FROM ${source.from} WHERE ${where}`, c.filterParams) as Promise<Array<{ n: number }>>,
  ]);
  return { rows, total: pageTotal(counted[0]?.n ?? 0, rows.length, query.paging) };
}

/**
 * The total a page states, from a count read beside it: the two reads see the data at two moments,
 * so a row written or deleted between them made the count disagree with the page (7 counted with
 * 3 listed; 3 counted with the 3rd and 4th listed). A page that is not full ends the list, so it
 * states the total itself; a full page (or one past the end) takes the count, never less than
 * what it has shown.
 */
export function pageTotal(counted: number, listed: number, paging: { start: number; limit: number }): number {
  if (listed < paging.limit && (listed > 0 || paging.start === 0)) return paging.start + listed;
  return listed ? Math.max(counted, paging.start + listed) : counted;
}

/** `metadata` of every listing. */
export function pageMetadata(query: ListQuery, count: number, total: number) {
  return { start: query.paging.start, limit: query.paging.limit, count, total };
}
