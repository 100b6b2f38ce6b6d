import { type ListQuery, type ListResource, compileListQuery } from '@meld/filters';
import type { DataSource } from 'typeorm';

/** What a listing reads: `SELECT <columns> FROM <from> WHERE <scope> AND <filter>`, scope bound with `scopeParams` ($1…). */
export interface ListSource {
  columns: string;
  from: string;
  scope: string;
  scopeParams: unknown[];
}

/** One page of a listing and how many rows match the filter, in two statements run side by side. */
export async function listPage<Row>(ds: DataSource, source: ListSource, query: ListQuery, resource: ListResource): Promise<{ rows: Row[]; total: number }> {
  const c = compileListQuery(query, resource, source.scopeParams);
  const where = `${source.scope} AND ${c.where}`;
  const [rows, counted] = await Promise.all([
    ds.query(`SELECT ${source.columns} FROM ${source.from} WHERE ${where} ORDER BY ${c.orderBy} LIMIT ${c.limit} OFFSET ${c.offset}`, c.params) as Promise<Row[]>,
    ds.query(`SELECT count(*)::int AS n FROM ${source.from} WHERE ${where}`, c.filterParams) as Promise<Array<{ n: number }>>,
  ]);
  return { rows, total: counted[0]?.n ?? 0 };
}

/** `metadata` of every listing. */
export function pageMetadata(query: ListQuery, count: number, total: number) {
  return { start: query.paging.start, limit: query.paging.limit, count, total };
}
