import type { ListResource } from '@meld/filters';

/** A condition on one country row of the sender: `countries*country_eq=FR` = "reaches FR". */
const anyCountry = (predicate: string) => `EXISTS (SELECT 1 FROM sender_countries c WHERE c.sender_id = s.id AND ${predicate})`;

/** The list filter's whitelist for senders (`s` = senders, `c` = one of its sender_countries). */
export const SENDER_FIELDS: ListResource = {
  name: 'senders',
  fields: {
    id: { type: 'string', sql: 's.id::text', sortable: true },
    alias: { type: 'string', sql: 's.alias', sortable: true },
    name: { type: 'string', sql: 's.name', sortable: true },
    status: { type: 'string', sql: 's.status', sortable: true },
    createdAt: { type: 'date', sql: 's.created_at', sortable: true },
    'countries.country': { type: 'string', sql: 'c.country', any: anyCountry },
    'countries.accepted': { type: 'boolean', sql: 'c.accepted', any: anyCountry },
    'countries.effectiveStatus': { type: 'string', sql: 'c.effective_status', any: anyCountry },
    'countries.price': { type: 'number', sql: 'c.price', any: anyCountry },
  },
  defaultSort: [{ field: ['createdAt'], direction: 'asc' }],
  tieBreaker: 's.id',
};
