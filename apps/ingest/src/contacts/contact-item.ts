import { CUSTOM_ATTRIBUTE_UID, CUSTOM_ATTRIBUTE_UID_RULE, dict, isSuppressionAttribute, suppressionWriteRefused } from '@meld/contracts';
import { type AttributeRule, type AttributeValue, inferRule, normaliseValue, valueError } from './attribute-rules';
import { unstorableText } from '@meld/api';

export type AttributePatch = Record<string, AttributeValue | null>;
export type ItemErrors = Record<string, string[]>;

export interface NewAttribute {
  uid: string;
  type: AttributeRule['type'];
  multivalue: boolean;
}

export interface ParsedAttributes {
  patch: AttributePatch;
  errors: ItemErrors;
  /** Custom attributes this item would create (first value's JSON type). */
  created: NewAttribute[];
}

// The message key `project/datasource/userId` must stay within the contracts id limit (256).
const USER_ID_MAX = 180;

/**
 * `_user_id`: a required non-empty string (the key of the contact in its data source), not `.`
 * or `..`: HTTP clients resolve such a path segment (`%2E` too, WHATWG URL), so the contact
 * could never be deleted or read by its path (ADR 0036).
 */
export function userIdError(value: unknown): string | null {
  if (value === '.' || value === '..') return 'must not be "." or ".." (HTTP clients drop such a path segment, so the contact could not be deleted or read by its path)';
  return keyError(value, USER_ID_MAX);
}

/** A required key field (`_user_id`, `_event_id`): a non-empty string of at most `max` characters. */
export function keyError(value: unknown, max: number): string | null {
  if (value === undefined || value === null) return 'is required';
  if (typeof value !== 'string' || value.trim() === '') return 'must be a non-empty string';
  if (value.length > max) return `must be at most ${max} characters`;
  return unstorableText(value);
}

/**
 * Checks contact attributes against the catalogue: an unknown `_` name is an error naming
 * it, internal or disabled attributes cannot be written, nor `_suppressed_<channel>`, which only
 * the messaging app writes (ADR 0361), null included; values must fit the attribute's
 * type; `null` clears. A custom name that is not in the catalogue yet is typed from its
 * first value, which must then fit that type like any later value (`pending` holds names created earlier in the same batch, so the batch
 * agrees with itself). `skip` names fields handled by the caller (`_user_id`, event fields).
 */
export function parseAttributes(
  input: Record<string, unknown>,
  catalogue: ReadonlyMap<string, AttributeRule>,
  pending: ReadonlyMap<string, AttributeRule>,
  skip: ReadonlySet<string>,
): ParsedAttributes {
  const patch: AttributePatch = dict();
  const errors: ItemErrors = dict();
  const created: NewAttribute[] = [];
  const fail = (name: string, message: string) => (errors[name] ??= []).push(message);
  for (const [name, value] of Object.entries(input)) {
    if (skip.has(name)) continue;
    if (isSuppressionAttribute(name)) {
      fail(name, suppressionWriteRefused(name));
      continue;
    }
    const rule = catalogue.get(name) ?? pending.get(name);
    if (!rule) {
      if (name.startsWith('_')) {
        fail(name, `unknown reserved attribute ${name}`);
        continue;
      }
      if (!CUSTOM_ATTRIBUTE_UID.test(name)) {
        fail(name, `invalid attribute name: ${CUSTOM_ATTRIBUTE_UID_RULE}`);
        continue;
      }
      if (value === null) continue; // nothing to clear, nothing to create
      const inferred = inferRule(name, value);
      if (typeof inferred === 'string') {
        fail(name, inferred);
        continue;
      }
      // The value must fit the rule it would create (every value of a list of the first one's
      // type, lengths, counts, storable text): an item refused for it creates nothing (ADR 0035).
      const err = valueError({ uid: name, ...inferred, enabled: true, internal: false, reserved: false }, value);
      if (err) {
        fail(name, err);
        continue;
      }
      created.push({ uid: name, ...inferred });
      patch[name] = value as AttributeValue;
      continue;
    }
    if (rule.internal) {
      fail(name, `${name} is maintained by Meld and cannot be written`);
      continue;
    }
    if (!rule.enabled) {
      fail(name, `attribute ${name} is disabled`);
      continue;
    }
    if (value === null) {
      patch[name] = null;
      continue;
    }
    const err = valueError(rule, value);
    if (err) fail(name, err);
    else patch[name] = normaliseValue(rule, value as AttributeValue);
  }
  return { patch, errors, created };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
