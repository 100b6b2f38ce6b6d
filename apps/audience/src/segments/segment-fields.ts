import type { ListResource } from '@meld/filters';

/** The list filter's whitelist for segments (`g` = segments). */
export const SEGMENT_FIELDS: ListResource = {
  name: 'segments',
  fields: {
    id: { type: 'string', sql: 'g.id::text', sortable: true },
    name: { type: 'string', sql: 'g.name', sortable: true },
    description: { type: 'string', sql: 'g.description', sortable: true },
    createdAt: { type: 'date', sql: 'g.created_at', sortable: true },
    updatedAt: { type: 'date', sql: 'g.updated_at', sortable: true },
  },
  defaultSort: [{ field: ['createdAt'], direction: 'asc' }],
  tieBreaker: 'g.id',
};
