import type { ListResource } from '../../src/list-query/resource';

/**
 * A resource with one field of every kind, for the lib's own tests (unit, property and the
 * Postgres integration spec, which creates these tables).
 */
export const ITEMS: ListResource = {
  name: 'items',
  fields: {
    id: { type: 'string', sql: 't.id', sortable: true },
    name: { type: 'string', sql: 't.name', sortable: true },
    score: { type: 'number', sql: 't.score', sortable: true },
    createdAt: { type: 'date', sql: 't.created_at', sortable: true },
    active: { type: 'boolean', sql: 't.active' },
    'tags.label': { type: 'string', sql: 'g.label', any: (p) => `EXISTS (SELECT 1 FROM list_query_tags g WHERE g.item_id = t.id AND ${p})` },
  },
  json: { attributes: { sql: 't.attributes', sortable: true } },
  defaultSort: [{ field: ['createdAt'], direction: 'desc' }],
  tieBreaker: 't.id',
  group: 'createdAt',
};
