import type { ListResource } from '@meld/filters';

/** The list filter's whitelist for data sources (`d` = data_sources). */
export const DATA_SOURCE_FIELDS: ListResource = {
  name: 'data sources',
  fields: {
    id: { type: 'string', sql: 'd.id::text', sortable: true },
    uid: { type: 'string', sql: 'd.uid', sortable: true },
    name: { type: 'string', sql: 'd.name', sortable: true },
    connector: { type: 'string', sql: 'd.connector', sortable: true },
    priority: { type: 'number', sql: 'd.priority', sortable: true },
    createdAt: { type: 'date', sql: 'd.created_at', sortable: true },
  },
  // Creation order, as the admin listing.
  defaultSort: [{ field: ['createdAt'], direction: 'asc' }],
  tieBreaker: 'd.id',
};
