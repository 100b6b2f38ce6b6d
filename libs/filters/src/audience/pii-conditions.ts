import type { AudienceFilterNode, FilterCatalogue } from './types';

const PII_TYPES = new Set(['email', 'phone']);

/**
 * Path of the first condition on an email or phone attribute, or on an event parameter declared
 * email or phone (the tree mirrors the JSON: children in order), or null. Such a condition
 * answers "is this person a contact?" (or "did this address sign up?"), so callers require
 * dataPolicy.mayReadPii for it (a count, a coverage probe): "phone and email … searchable" is
 * part of that right (product spec, Authentication item 6; ADR 0053).
 */
export function piiConditionPath(node: AudienceFilterNode, catalogue: FilterCatalogue, path = 'root'): string | null {
  if (node.type === 'attribute_condition') {
    const type = catalogue.attributes.find((a) => a.uid === node.key)?.type;
    return type && PII_TYPES.has(type) ? `${path}.key` : null;
  }
  if (node.type === 'event_condition') {
    const type = catalogue.eventTypes.find((e) => e.uid === node.eventType)?.parameters.find((p) => p.uid === node.parameter)?.dataType;
    return type && PII_TYPES.has(type) ? `${path}.key` : null;
  }
  for (const [i, child] of node.children.entries()) {
    const found = piiConditionPath(child, catalogue, `${path}.children[${i}]`);
    if (found) return found;
  }
  return null;
}
