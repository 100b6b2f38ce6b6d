import type { ListResource } from '@meld/filters';
import { CURRENT_AUDIENCE_ID } from '../current-audience-id';

/**
 * The list filter's whitelist for direct SMS (`m` = sms_messages, ADR 0159). The text and the number
 * are not filterable: they are PII, shown only to some tokens, and a filter on them would
 * tell the others what they hold.
 */
export const SMS_FIELDS: ListResource = {
  name: 'SMS messages',
  fields: {
    id: { type: 'string', sql: 'm.id::text', sortable: true },
    // The contact as it is now: a merged contact's messages include those of the ids it absorbed.
    audienceId: { type: 'string', sql: `${CURRENT_AUDIENCE_ID}::text`, sortable: true },
    status: { type: 'string', sql: 'm.status', sortable: true },
    senderId: { type: 'string', sql: 'm.sender_id::text', sortable: true },
    country: { type: 'string', sql: 'm.country', sortable: true },
    encoding: { type: 'string', sql: 'm.encoding', sortable: true },
    messagesCount: { type: 'number', sql: 'm.messages_count', sortable: true },
    createdAt: { type: 'date', sql: 'm.created_at', sortable: true },
    updatedAt: { type: 'date', sql: 'm.updated_at', sortable: true },
  },
  defaultSort: [{ field: ['createdAt'], direction: 'desc' }],
  tieBreaker: 'm.id',
};
