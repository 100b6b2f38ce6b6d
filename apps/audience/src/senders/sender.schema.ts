import { SenderSchema, listEnvelope, type SenderCountryFields, type SenderFields } from '@meld/api';

export const SenderListSchema = listEnvelope(SenderSchema, 'SenderList');

/** A senders row as the repository reads it: the fields the public shape is built from (libs/api). */
export type SenderRow = SenderFields;
/** A sender_countries row; raw SQL returns `numeric` as a string. */
export type SenderCountryRow = SenderCountryFields & { senderId: string; price: string };
