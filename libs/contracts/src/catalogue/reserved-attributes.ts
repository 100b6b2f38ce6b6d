/** Attribute data types of the catalogue. */
export const ATTRIBUTE_TYPES = ['string', 'number', 'boolean', 'date', 'datetime', 'email', 'phone'] as const;
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number];

/**
 * A custom attribute's uid, one rule for the admin API's catalogue and ingest's new names
 * (ADR 0035): letters in either case, digits, `_ . -`, at most 64, starting with a letter or
 * digit. A leading `_` is refused: those names are reserved (RESERVED_ATTRIBUTES).
 */
export const CUSTOM_ATTRIBUTE_UID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export const CUSTOM_ATTRIBUTE_UID_RULE = 'letters, digits, _ . - (at most 64 characters, starting with a letter or digit; names starting with _ are reserved)';

export interface AttributeSpec {
  uid: string;
  label: string;
  type: AttributeType;
  multivalue: boolean;
  enabled: boolean;
  visible: boolean;
  internal: boolean;
  unique: boolean;
}

const a = (uid: string, label: string, type: AttributeType, extra: Partial<AttributeSpec> = {}): AttributeSpec => ({
  uid,
  label,
  type,
  multivalue: false,
  enabled: true,
  visible: true,
  internal: false,
  unique: false,
  ...extra,
});

/**
 * The reserved (`_`) attributes seeded into every project. Names outside this list that
 * start with `_` are refused by ingest; `unique` marks the ones that can merge contacts.
 */
export const RESERVED_ATTRIBUTES: readonly AttributeSpec[] = [
  a('_user_id', 'User id', 'string', { unique: true }),
  a('_first_name', 'First name', 'string'),
  a('_last_name', 'Last name', 'string'),
  a('_email', 'Email', 'email', { unique: true }),
  a('_phone_mobile', 'Mobile phone', 'phone', { unique: true }),
  a('_country', 'Country', 'string'),
  a('_city', 'City', 'string'),
  a('_language', 'Language', 'string'),
  a('_timezone', 'Time zone', 'string'),
  a('_gender', 'Gender', 'string'),
  a('_birthday', 'Birthday', 'date'),
  a('_created_at', 'Created at', 'datetime', { internal: true }),
  a('_updated_at', 'Updated at', 'datetime', { internal: true }),
  a('_datasources', 'Data sources', 'string', { multivalue: true, internal: true }),
  a('_ds_contact_ids', 'Data-source contact ids', 'string', { multivalue: true, internal: true }),
  a('_consent_sms', 'SMS consent', 'string'),
  a('_consent_email', 'Email consent', 'string'),
  a('_consent_rcs', 'RCS consent', 'string'),
  a('_consent_whatsapp', 'WhatsApp consent', 'string'),
  // Messaging's published copy of its suppression list (ADR 0361): only messaging writes them.
  a('_suppressed_sms', 'SMS suppressed', 'boolean', { internal: true }),
  a('_suppressed_email', 'Email suppressed', 'boolean', { internal: true }),
  a('_suppressed_rcs', 'RCS suppressed', 'boolean', { internal: true }),
  a('_suppressed_whatsapp', 'WhatsApp suppressed', 'boolean', { internal: true }),
];

export const EVENT_CATEGORIES = ['ecommerce', 'crm', 'marketing', 'subscriptions', 'payments', 'meetings', 'contact_data', 'contact_behaviour'] as const;
