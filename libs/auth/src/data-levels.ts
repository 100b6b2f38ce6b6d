import { type DataMode, type Scope, dict } from '@meld/contracts';
import { maskEmail, maskPhone, maskPiiDeep, maskPiiInText } from './pii-masks';
import type { Principal } from './principal';

/**
 * What contact data a caller may see (product spec, Authentication items 5 and 6): the
 * level comes from the token's scopes, the data mode from the project. Every endpoint that
 * returns contacts goes through `serializeContact`, so the rule lives in one place.
 */

export type DataLevel = 'none' | 'default' | 'basic' | 'full';
export type Contact = { id: string } & Record<string, unknown>;
type Caller = Pick<Principal, 'kind' | 'scopes' | 'project'>;

/** Default: "full name and user id only" (plus the audience id, needed for any later call). */
const DEFAULT_FIELDS = ['id', '_user_id', '_first_name', '_last_name'] as const;
/** Basic adds phone, email, country (the name is already there) and every boolean field. */
const BASIC_FIELDS = [...DEFAULT_FIELDS, '_phone_mobile', '_email', '_country'] as const;
/** The personal identifiers masked in anonymized mode and unsearchable outside normal mode. */
const PII_MASKS = new Map<string, (value: string) => string>([
  ['_email', maskEmail],
  ['_phone_mobile', maskPhone],
]);

export function dataLevelOf(caller: Pick<Principal, 'kind' | 'scopes'>): DataLevel {
  if (caller.kind === 'admin') return 'full';
  const has = (s: Scope) => caller.scopes.includes(s);
  if (!has('PROJECT_AUDIENCE_READ')) return 'none';
  if (has('PROJECT_AUDIENCE_DATA_FULL')) return 'full';
  if (has('PROJECT_AUDIENCE_DATA_BASIC')) return 'basic';
  return 'default';
}

/** A principal without a project (never the case on contact routes) fails closed. */
export function dataModeOf(caller: Pick<Principal, 'project'>): DataMode {
  return caller.project?.dataMode ?? 'blocked';
}

/** `metadata.dataPolicy` of `GET /v1/`, and the rule the serializer applies. */
export function dataPolicy(mode: DataMode, caller: Pick<Principal, 'kind' | 'scopes'>): { mayReadContactData: boolean; mayReadPii: boolean } {
  const level = dataLevelOf(caller);
  const mayReadContactData = mode !== 'blocked' && level !== 'none';
  return { mayReadContactData, mayReadPii: mayReadContactData && mode === 'normal' && (level === 'basic' || level === 'full') };
}

/**
 * Searching by phone or email answers "is this person a contact?", so it needs the same
 * right as reading them in clear: normal mode and the Basic or Full level.
 */
export function maySearchByPii(caller: Caller): boolean {
  return dataPolicy(dataModeOf(caller), caller).mayReadPii;
}

/**
 * Reading a contact by its user id answers "is this a contact?" as a search does. A user id that
 * is (or holds) a phone number or an email, as auto-created contacts' are (ADR 0184), is that
 * search wherever the read would not show it in clear: anonymized and blocked mode mask or hide
 * it, so there the lookup is refused as a search by phone or email is (ADR 0045, amended).
 * Other user ids stay readable in every mode: the Default level shows them, and blocked mode
 * keeps `{ id }` so the contact can still be addressed (ADR 0121).
 */
export function mayReadByUserId(caller: Caller, userId: string): boolean {
  const showsInClear = dataModeOf(caller) === 'normal' && dataLevelOf(caller) !== 'none';
  return showsInClear || maskPiiInText(userId) === userId;
}

/**
 * The contact as this caller may see it. Blocked mode (or no audience scope) leaves only
 * `{ id }`: the opaque audience id, so a client can still address the contact (e.g. send
 * an SMS) without reading anything about it. Anonymized mode masks phone and email at
 * every level, and the emails and phone numbers inside every other value (ADR 0121).
 */
export function serializeContact(contact: Contact, caller: Caller): Contact {
  const mode = dataModeOf(caller);
  const level = dataLevelOf(caller);
  if (mode === 'blocked' || level === 'none') return { id: contact.id };
  const out: Contact = level === 'full' ? { ...contact } : pick(contact, level);
  if (mode === 'anonymized') {
    // Phone and email by their own masks; every other value has the emails and phone numbers in it
    // masked (a user id that is a phone, `_ds_contact_ids`, a custom email attribute, free text).
    for (const [field, value] of Object.entries(out)) {
      if (field === 'id') continue;
      const mask = PII_MASKS.get(field);
      out[field] = mask ? maskValue(value, mask) : maskPiiDeep(value);
    }
  }
  return out;
}

function pick(contact: Contact, level: 'default' | 'basic'): Contact {
  const out: Record<string, unknown> = dict(); // field names are the sources' (ADR 0124)
  for (const field of level === 'basic' ? BASIC_FIELDS : DEFAULT_FIELDS) {
    if (Object.hasOwn(contact, field)) out[field] = contact[field];
  }
  if (level === 'basic') {
    for (const [field, value] of Object.entries(contact)) {
      if (typeof value === 'boolean' || (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'boolean'))) out[field] = value;
    }
  }
  return out as Contact;
}

function maskValue(value: unknown, mask: (v: string) => string): unknown {
  if (typeof value === 'string') return mask(value);
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? mask(v) : v));
  return value;
}
