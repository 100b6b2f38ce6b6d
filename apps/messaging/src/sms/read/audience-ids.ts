import { type ListFilter, type ListQuery, type Scalar, isLogical } from '@meld/filters';
import type { DataSource } from 'typeorm';
import { isUuid } from '../sms.repository';

const FIELD = 'audienceId';

/**
 * The query with every contact id given to `audienceId` read as a contact read reads it: any case
 * of its letters, an absorbed id as its survivor, so filtering by an id a client kept from an
 * earlier answer still finds the contact's messages. Other values are left as written.
 */
export async function withCurrentAudienceIds(ds: DataSource, projectId: string, query: ListQuery): Promise<ListQuery> {
  if (!query.filter) return query;
  const given = new Set<string>();
  collect(query.filter, given);
  if (!given.size) return query;
  const rows: Array<{ absorbed: string; survivor: string }> = await ds.query(
    `SELECT absorbed_id::text AS absorbed, survivor_id::text AS survivor FROM audience_aliases WHERE project_id = $1 AND absorbed_id = ANY($2::uuid[])`,
    [projectId, [...given]],
  );
  const survivors = new Map(rows.map((r) => [r.absorbed, r.survivor]));
  const current = (v: Scalar): Scalar => (typeof v === 'string' && isUuid(v) ? (survivors.get(v.toLowerCase()) ?? v.toLowerCase()) : v);
  return { ...query, filter: rewrite(query.filter, current) };
}

function isAudienceId(node: ListFilter): boolean {
  return !isLogical(node) && node.field.length === 1 && node.field[0] === FIELD;
}

function collect(node: ListFilter, into: Set<string>): void {
  if (isLogical(node)) return node.children.forEach((c) => collect(c, into));
  if (!isAudienceId(node)) return;
  for (const v of Array.isArray(node.value) ? node.value : [node.value]) if (typeof v === 'string' && isUuid(v)) into.add(v.toLowerCase());
}

function rewrite(node: ListFilter, current: (v: Scalar) => Scalar): ListFilter {
  if (isLogical(node)) return { ...node, children: node.children.map((c) => rewrite(c, current)) };
  if (!isAudienceId(node)) return node;
  return { ...node, value: Array.isArray(node.value) ? node.value.map(current) : current(node.value as Scalar) };
}
