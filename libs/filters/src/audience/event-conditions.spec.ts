import { TEST_CATALOGUE } from '../../test/audience/test-catalogue';
import { eventConditionPath } from './event-conditions';
import { parseAudienceFilter } from './parse';

/** The path found in a filter as a request sends it, parsed against the lib's test catalogue (`purchase`, `city`). */
const pathIn = (root: unknown, at?: string) => eventConditionPath(parseAudienceFilter(root, TEST_CATALOGUE, at), at);

const bought = { type: 'event_condition', key: 'purchase.product-id', operator: 'contains-string', values: ['sku'] };
const city = { type: 'attribute_condition', key: 'city', operator: 'is-set', values: [] };

describe('eventConditionPath (ADR 0344)', () => {
  it('names the first node on events at any depth: a standalone event_condition by its key, a group_event by its eventType', () => {
    expect(pathIn(bought)).toBe('root.key');
    expect(pathIn({ type: 'group', children: [city, bought] })).toBe('root.children[1].key');
    const never = { type: 'group_event', eventType: 'purchase', negate: true, children: [] };
    expect(pathIn({ type: 'group', children: [city, { type: 'group', operator: 'or', children: [city, never] }, bought] })).toBe('root.children[1].children[1].eventType');
    expect(pathIn({ type: 'group_event', eventType: 'purchase', children: [bought] }, 'filter.root')).toBe('filter.root.eventType');
  });

  it('is null for attributes alone and an empty group', () => {
    expect(pathIn({ type: 'group', children: [city, { type: 'group', children: [city] }] })).toBeNull();
    expect(pathIn({ type: 'group', children: [] })).toBeNull();
    expect(pathIn(city)).toBeNull();
  });
});
