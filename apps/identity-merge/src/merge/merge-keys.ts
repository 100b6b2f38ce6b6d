import { createHash } from 'node:crypto';
import { type AttributeType, DEFAULT_JUNK_VALUES, MEMBER_KEY, linkedRef, localeCountry, normaliseKeyValue, normalisePhone } from '@meld/contracts';
import type { CountryCode } from 'libphonenumber-js';

// The pure normalisation lives in @meld/contracts (contact-keys.ts): the audience app's
// searches must normalise exactly as the merge keys.
export { DEFAULT_JUNK_VALUES, localeCountry, normaliseKeyValue };

/** A merge key: the attribute it comes from and its normalised value. */
export interface MergeKey {
  attribute: string;
  value: string;
}

export interface KeyOptions {
  /** Merging attributes beyond `_user_id` (the project's configuration). */
  mergingAttributes: readonly string[];
  /** Project locale (`fr_FR`): its country is the default for national phone numbers. */
  locale: string;
  junkValues?: readonly string[];
  /** Catalogue type of each merging attribute: one of type `email` or `phone` is keyed as such (ADR 0024). */
  attributeTypes?: ReadonlyMap<string, AttributeType>;
  /** Data sources whose contacts' `@member:` user ids link them to another source contact: the `meld-messaging` one (ADR 0362). */
  linkSources?: ReadonlySet<string>;
}

/**
 * Longest key value kept as it is, in UTF-8 bytes; a longer one is keyed by its SHA-256
 * (`sha256:<hex>`), which merges exactly the same contacts. `merge_keys` is a btree primary key
 * whose rows hold at most 2,704 bytes: a 2,048-character custom value or email in CJK (6 KB)
 * failed every step that reached it, so the contact never merged and blocked the merges of the
 * contacts sharing a key with it (ADR 0024). A `_user_id` (180 characters) stays whole.
 */
export const MAX_KEY_BYTES = 1024;

function storableKey(value: string): string {
  return Buffer.byteLength(value, 'utf8') > MAX_KEY_BYTES ? `sha256:${createHash('sha256').update(value, 'utf8').digest('hex')}` : value;
}

/** Compiled key options, built once per project. */
export class KeyNormaliser {
  private readonly junk: ReadonlySet<string>;
  private readonly country: CountryCode | undefined;
  private readonly types: ReadonlyMap<string, AttributeType>;
  private readonly links: ReadonlySet<string>;
  readonly attributes: readonly string[];

  constructor(options: KeyOptions) {
    this.junk = new Set((options.junkValues ?? DEFAULT_JUNK_VALUES).map((v) => v.trim().toLowerCase()));
    this.country = localeCountry(options.locale);
    this.types = options.attributeTypes ?? new Map();
    this.links = options.linkSources ?? new Set();
    this.attributes = ['_user_id', ...options.mergingAttributes.filter((a) => a !== '_user_id')];
  }

  /** A phone number in E.164 with the project's country as default (as its merge key), or null when it does not parse as a valid number. */
  phone(raw: string): string | null {
    return normalisePhone(raw, this.country);
  }

  /**
   * Every merge key of a source contact, `_user_id` first, deduplicated. With its data source
   * (ADR 0362): a contact whose `_user_id` is junk has the `@member` key of its own ref instead,
   * and a messaging contact linked to it (`@member:<ref>`) has that of the ref instead of a
   * `_user_id` key, so the two merge with each other and with nobody else.
   */
  keysOf(userId: string, attributes: Readonly<Record<string, unknown>>, dataSourceId?: string): MergeKey[] {
    const out: MergeKey[] = [];
    for (const attribute of this.attributes) {
      if (attribute === '_user_id' && dataSourceId !== undefined) {
        const member = this.links.has(dataSourceId) ? linkedRef(userId) : null;
        if (member !== null || normaliseKeyValue(attribute, userId, this.country, this.junk) === null) {
          out.push({ attribute: MEMBER_KEY, value: storableKey(member ?? `${dataSourceId}/${userId}`) });
          continue;
        }
      }
      const raw = attribute === '_user_id' ? userId : attributes[attribute];
      const value = normaliseKeyValue(attribute, raw, this.country, this.junk, this.types.get(attribute));
      if (value !== null) out.push({ attribute, value: storableKey(value) });
    }
    return out;
  }
}

/** One string per key, for maps: attribute and value joined by a NUL (never in a value we keep). */
export function keyString(key: MergeKey): string {
  return `${key.attribute}\u0000${key.value}`;
}
