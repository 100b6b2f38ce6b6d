import { type ListFilter, type ListQuery, type ListResource, type Scalar, isLogical } from '@meld/filters';
import type { DataSource } from 'typeorm';
import { CURRENT_AUDIENCE_ID } from '../current-audience-id';
import { isUuid } from '../sms.repository';
import { SMS_FIELDS } from './sms-fields';

const FIELD = 'audienceId';

/**
 * The query and the list's fields for one request. Every contact id given to `audienceId` is read
 * as a contact read reads it: any case of its letters, an absorbed id as its survivor, so filtering
 * by an id a client kept from an earlier answer still finds the contact's messages. Other values
 * are left as written. `eq`, `in` (either case) and their negations compare the id a message was
 * sent to with the ids whose current contact is the one given (its own id unless it was absorbed,
 * and every id absorbed into it), so the `(project_id, audience_id)` index finds them (ADR 0159).
 */
export async function withCurrentAudienceIds(ds: DataSource, projectId: string, query: ListQuery): Promise<{ query: ListQuery; fields: ListResource }> {
  const given = new Set<string>();
  if (query.filter) collect(query.filter, given);
  // The ids of the messages each given id's current contact holds, by that contact's id.
  const rows: Array<{ given: string; current: string; stored: string[] }> = given.size
    ? await ds.query(
        `SELECT c.given::text AS given, c.current::text AS current,
                ARRAY(SELECT c.current WHERE NOT EXISTS (SELECT 1 FROM audience_aliases x WHERE x.project_id = $1 AND x.absorbed_id = c.current)
                      UNION ALL SELECT a.absorbed_id FROM audience_aliases a WHERE a.project_id = $1 AND a.survivor_id = c.current)::text[] AS stored
           FROM (SELECT m.audience_id AS given, ${CURRENT_AUDIENCE_ID} AS current FROM (SELECT $1::uuid AS project_id, unnest($2::uuid[]) AS audience_id) m) c`,
        [projectId, [...given]],
      )
    : [];
  const currentOf = new Map(rows.map((r) => [r.given, r.current]));
  const storedOf = new Map(rows.map((r) => [r.current, r.stored]));
  const current = (v: Scalar): Scalar => (typeof v === 'string' && isUuid(v) ? (currentOf.get(v.toLowerCase()) ?? v.toLowerCase()) : v);
  // The values are current ids (see `current`); a value that is no id matches no message.
  const equals = (values: readonly Scalar[], _ignoreCase: boolean, bind: (value: unknown, cast: string) => string) =>
    `m.audience_id = ANY(${bind([...new Set(values.flatMap((v) => (typeof v === 'string' && storedOf.get(v)) || []))], 'uuid[]')})`;
  return {
    query: query.filter ? { ...query, filter: rewrite(query.filter, current) } : query,
    fields: { ...SMS_FIELDS, fields: { ...SMS_FIELDS.fields, [FIELD]: { ...SMS_FIELDS.fields[FIELD]!, equals } } },
  };
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
