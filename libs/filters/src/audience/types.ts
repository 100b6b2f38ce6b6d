/**
 * The audience filter grammar of system.md section 4 (version 0.0.1), as parsed: every node is
 * checked against the project catalogue and carries what compilation needs (the value type of
 * its attribute or parameter), so compiling never fails on a parsed tree.
 */

export const AUDIENCE_FILTER_VERSION = '0.0.1';

/** Catalogue types (libs/contracts ATTRIBUTE_TYPES); parameters use the same set. */
export type CatalogueType = 'string' | 'number' | 'boolean' | 'date' | 'datetime' | 'email' | 'phone';

/** What the filter needs to know of a project's catalogue. */
export interface FilterCatalogue {
  /** `slot`: the attribute's ClickHouse column (`attributes.slot`, ATTRIBUTE_SLOTS in @meld/contracts), if it has one. */
  attributes: ReadonlyArray<{ uid: string; type: CatalogueType; multivalue: boolean; slot?: number | null }>;
  /**
   * `keptDays`: how far back the type's events are kept, the plan's look-back or the type's
   * shorter `retentionDays` (system.md §4, ADR 0168); absent: no bound.
   */
  eventTypes: ReadonlyArray<{ uid: string; parameters: ReadonlyArray<{ uid: string; dataType: string; multiValue?: number }>; keptDays?: number | null }>;
}

/** How values of an attribute or parameter compare: the operator families. */
export type AudienceValueKind = 'string' | 'number' | 'boolean' | 'date';

const STRING_OPERATORS = ['matches-string', 'not-matches-string', 'contains-string', 'starts-with-string', 'ends-with-string'] as const;
const NUMBER_OPERATORS = ['equals-number', 'greater-than', 'less-than', 'between'] as const;
const DATE_OPERATORS = ['before-date', 'after-date', 'between', 'in-last-days'] as const;
const BOOLEAN_OPERATORS = ['is-true', 'is-false'] as const;
const PRESENCE_OPERATORS = ['is-set', 'is-not-set'] as const;

export type AudienceConditionOperator =
  | (typeof STRING_OPERATORS)[number]
  | (typeof NUMBER_OPERATORS)[number]
  | (typeof DATE_OPERATORS)[number]
  | (typeof BOOLEAN_OPERATORS)[number]
  | (typeof PRESENCE_OPERATORS)[number];

export const AUDIENCE_CONDITION_OPERATORS: readonly AudienceConditionOperator[] = [
  ...new Set<AudienceConditionOperator>([...STRING_OPERATORS, ...NUMBER_OPERATORS, ...DATE_OPERATORS, ...BOOLEAN_OPERATORS, ...PRESENCE_OPERATORS]),
];

/** A condition value as given: strings for string and date operators, numbers for number operators and in-last-days. */
export type AudienceConditionValue = string | number;

export interface GroupNode {
  type: 'group';
  operator: 'and' | 'or';
  negate: boolean;
  children: AudienceFilterNode[];
}

export interface AttributeConditionNode {
  type: 'attribute_condition';
  /** Attribute uid. */
  key: string;
  operator: AudienceConditionOperator;
  values: AudienceConditionValue[];
  /** From the catalogue: how the attribute's values are stored and compared. */
  valueKind: AudienceValueKind;
  /** From the catalogue: several values (one entry each in the snapshot arrays). */
  multivalue: boolean;
  /** From the catalogue: the slot column holding a single-valued attribute's value, if it has one. */
  slot?: { kind: 'str' | 'num'; index: number };
}

export interface EventConditionNode {
  type: 'event_condition';
  /** `<eventType>.<parameter>` as given. */
  key: string;
  eventType: string;
  parameter: string;
  operator: AudienceConditionOperator;
  values: AudienceConditionValue[];
  valueKind: AudienceValueKind;
  /** From the catalogue: the parameter takes several values (`multiValue` > 1), stored as a JSON array. */
  multivalue: boolean;
  /** From the catalogue: only events of the last `keptDays` days count (ADR 0060), standalone too. */
  keptDays?: number;
}

/** `lastDays` counts back from `now`; `from`/`to` are ISO dates or date-times, inclusive. */
export type EventTimeframe = { lastDays: number } | { from?: string; to?: string };

export interface EventCount {
  operator: 'at-least' | 'at-most' | 'exactly';
  value: number;
}

export interface GroupEventNode {
  type: 'group_event';
  eventType: string;
  timeframe?: EventTimeframe;
  count?: EventCount;
  negate: boolean;
  /** All true on the same event. */
  children: EventConditionNode[];
  /** From the catalogue: only events of the last `keptDays` days count, whatever the timeframe (ADR 0060). */
  keptDays?: number;
}

export type AudienceFilterNode = GroupNode | AttributeConditionNode | GroupEventNode | EventConditionNode;

/** Catalogue type → the operator family its values use. */
export function audienceValueKind(type: string): AudienceValueKind {
  switch (type) {
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'date':
    case 'datetime':
      return 'date';
    default:
      // string, email, phone, and any parameter type this version does not know: compared as text.
      return 'string';
  }
}

export function audienceOperatorsFor(kind: AudienceValueKind): readonly AudienceConditionOperator[] {
  const family = { string: STRING_OPERATORS, number: NUMBER_OPERATORS, boolean: BOOLEAN_OPERATORS, date: DATE_OPERATORS }[kind];
  return [...family, ...PRESENCE_OPERATORS];
}
