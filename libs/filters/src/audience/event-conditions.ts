import type { AudienceFilterNode } from './types';

/**
 * Path of the first node on events, or null: a `group_event` (named by its `eventType`) or a
 * standalone `event_condition` (by its `key`), children in order. A filter on events makes what
 * a list or an aggregation returns event-derived (the named buyers of a product; a parameter's
 * value recovered by `contains-string` probes), so callers returning contacts or their values
 * require PROJECT_AUDIENCE_DATA_EVENTS for it; a count does not: a size is not contact data
 * (ADRs 0053, 0344).
 */
export function eventConditionPath(node: AudienceFilterNode, path = 'root'): string | null {
  switch (node.type) {
    case 'group_event':
      return `${path}.eventType`;
    case 'event_condition':
      return `${path}.key`;
    case 'attribute_condition':
      return null;
    case 'group':
      for (const [i, child] of node.children.entries()) {
        const found = eventConditionPath(child, `${path}.children[${i}]`);
        if (found) return found;
      }
      return null;
  }
}
