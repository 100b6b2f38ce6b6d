import { PHONE_CHANNELS, type AttributeType, type AudienceChange, type Channel, isEmail, isMobile } from '@meld/contracts';
import { slotValues } from '@meld/filters';

/**
 * One row of ClickHouse `audience_contacts` (libs/clickhouse/migrations/0003 and 0005). The encoding
 * is a contract with the filter compiler (libs/filters/src/audience):
 * - string, email and phone values → `str_keys` / `str_values`, the value as merged;
 * - number → `num_*`; boolean → `num_*` 1 / 0; date and datetime → `num_*`, unix seconds UTC
 *   (a date is its UTC midnight; a datetime is floored to the second);
 * - a multivalue attribute has one entry per value under the same key; null / absent: no entry;
 * - attributes the catalogue does not know: strings → str, numbers and booleans → num;
 * - a slotted attribute (`attributes.slot`) also fills its column `s<slot>` / `n<slot>` with
 *   the first value of its kind and sets its bit in `str_slots` / `num_slots` (libs/filters
 *   `slotValues`); an absent one leaves the column's default and its bit clear.
 */
export interface AudienceContactRow {
  project_id: string;
  audience_id: string;
  /** UInt64 as a decimal string (exact beyond 2^53), see `audienceRowVersion`. */
  version: string;
  deleted: 0 | 1;
  str_keys: string[];
  str_values: string[];
  num_keys: string[];
  num_values: number[];
  channels: string[];
  /** unix seconds (DateTime) */
  updated_at: number;
  /** Slot columns (`s3`, `n0`) of the contact's slotted attributes. */
  [slot: `${'s' | 'n'}${number}`]: string | number;
  /** Bit <slot> set: that slot holds a value. */
  str_slots?: number;
  num_slots?: number;
}

export type AudienceSnapshot = Extract<AudienceChange, { kind: 'snapshot' }>;
export type AudienceTombstone = Extract<AudienceChange, { kind: 'tombstone' }>;

export interface SlottedAttribute {
  uid: string;
  type: AttributeType;
  multivalue: boolean;
  slot: number;
}

/** What the sink knows of a project: attribute types by uid, the attributes with a slot column, the locale (default phone country). */
export interface ProjectContext {
  types: ReadonlyMap<string, AttributeType>;
  slotted: readonly SlottedAttribute[];
  locale: string | null;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

const VERSION_BITS = 20n;
const MAX_STEP_VERSION = (1n << VERSION_BITS) - 1n;

/**
 * The ClickHouse version of a message: the merge step's time in ms (`at`), then the audience
 * contact's own version in the low 20 bits.
 * - identity-merge's version alone restarts at 1 when an id is written anew, so an old
 *   tombstone (last version + 1) would beat a re-created contact for ever; the step time
 *   orders lifetimes.
 * - `at` alone ties when two steps of one contact fall in the same millisecond; the version
 *   (strictly increasing within a lifetime) breaks the tie.
 * - `at` is read from Postgres' clock under the project's merge lock (merge.repository.ts), so
 *   it never goes back between two committed steps of one project, whichever replica ran them.
 * Messages of one audience id share a partition and arrive in order, but a replay or a
 * rebalance can deliver an older one again: it writes a row with a lower version, which
 * ReplacingMergeTree (and FINAL / argMax reads) ignores. A version above 2^20 − 1 saturates
 * (only same-millisecond ties between such versions would then be arbitrary).
 */
export function audienceRowVersion(at: string, version: number): string {
  const v = BigInt(Math.max(0, Math.trunc(version)));
  return ((BigInt(Date.parse(at)) << VERSION_BITS) + (v > MAX_STEP_VERSION ? MAX_STEP_VERSION : v)).toString();
}

const seconds = (iso: string): number => Math.floor(Date.parse(iso) / 1000);

type Scalar = string | number | boolean;
type Encoded = { str: string } | { num: number } | null;

/** The typed encoding of one scalar, or null when it has none (a date that does not parse). */
export function encodeScalar(type: AttributeType | undefined, value: Scalar): Encoded {
  switch (type) {
    case 'string':
    case 'email':
    case 'phone':
      return { str: String(value) };
    case 'date':
      if (typeof value === 'string' && DATE.test(value)) {
        const t = Date.parse(`${value}T00:00:00Z`);
        return Number.isNaN(t) ? null : { num: t / 1000 };
      }
      break;
    case 'datetime':
      if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return { num: seconds(value) };
      break;
    default:
      break;
  }
  // number, boolean, unknown attributes, and a value that does not fit its type: by JSON type.
  if (typeof value === 'string') return type === 'date' || type === 'datetime' ? null : { str: value };
  if (typeof value === 'boolean') return { num: value ? 1 : 0 };
  return Number.isFinite(value) ? { num: value } : null;
}

const scalars = (value: unknown): Scalar[] =>
  (Array.isArray(value) ? value : [value]).filter((v): v is Scalar => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean');

/** Channels the contact has an address for: sms, rcs and whatsapp for a valid mobile, email for an email address. */
export function channelsOf(attributes: Readonly<Record<string, unknown>>, locale: string | null): Channel[] {
  const out: Channel[] = [];
  const phones = scalars(attributes._phone_mobile).filter((v): v is string => typeof v === 'string');
  if (phones.some((p) => isMobile(p, locale))) out.push(...PHONE_CHANNELS);
  const emails = scalars(attributes._email).filter((v): v is string => typeof v === 'string');
  if (emails.some(isEmail)) out.push('email');
  return out.sort();
}

/** Types of the attributes Meld maintains, for a catalogue that does not list them: still dates. */
const MAINTAINED_TYPES: ReadonlyMap<string, AttributeType> = new Map([
  ['_created_at', 'datetime'],
  ['_updated_at', 'datetime'],
]);

/**
 * The live row a snapshot states. The internal attributes Meld maintains are added from the
 * snapshot: `_datasources` (string, multivalue) from its data sources, `_updated_at` from its
 * `at` and `_created_at` from its `createdAt` (datetimes, when the catalogue types them so), so
 * the audience filters can select contacts by them.
 */
export function snapshotRow(s: AudienceSnapshot, context: ProjectContext): AudienceContactRow {
  const row = emptyRow(s.projectId, s.audienceId, audienceRowVersion(s.at, s.version), 0, s.at);
  const attributes: Record<string, unknown> = { ...s.attributes, _datasources: s.dataSources, _updated_at: s.at, ...(s.createdAt ? { _created_at: s.createdAt } : {}) };
  for (const key of Object.keys(attributes).sort()) {
    const type = context.types.get(key) ?? MAINTAINED_TYPES.get(key);
    for (const value of scalars(attributes[key])) {
      const encoded = encodeScalar(type, value);
      if (!encoded) continue;
      if ('str' in encoded) {
        row.str_keys.push(key);
        row.str_values.push(encoded.str);
      } else {
        row.num_keys.push(key);
        row.num_values.push(encoded.num);
      }
    }
  }
  row.channels = channelsOf(s.attributes, context.locale);
  return Object.assign(row, slotValues(row, context.slotted));
}

/** A deleted row: the contact was removed, or absorbed by a merge. */
export function tombstoneRow(t: AudienceTombstone): AudienceContactRow {
  return emptyRow(t.projectId, t.audienceId, audienceRowVersion(t.at, t.version), 1, t.at);
}

/** Attribute uids of a snapshot (the catalogue is refreshed when one is unknown). */
export function attributeKeys(s: AudienceSnapshot): string[] {
  return Object.keys(s.attributes);
}

function emptyRow(projectId: string, audienceId: string, version: string, deleted: 0 | 1, at: string): AudienceContactRow {
  return {
    project_id: projectId,
    audience_id: audienceId,
    version,
    deleted,
    str_keys: [],
    str_values: [],
    num_keys: [],
    num_values: [],
    channels: [],
    updated_at: Math.max(0, seconds(at)),
  };
}
