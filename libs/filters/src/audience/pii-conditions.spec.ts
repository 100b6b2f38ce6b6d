import { TEST_CATALOGUE } from '../../test/audience/test-catalogue';
import { piiConditionPath } from './pii-conditions';
import type { AudienceFilterNode, FilterCatalogue } from './types';

/** The lib's test catalogue (`_email` is an email attribute, `city` a string) with an event whose parameters are email, phone and string. */
const catalogue: FilterCatalogue = {
  ...TEST_CATALOGUE,
  eventTypes: [
    ...TEST_CATALOGUE.eventTypes,
    {
      uid: 'signup',
      parameters: [
        { uid: 'email', dataType: 'email' },
        { uid: 'mobile', dataType: 'phone' },
        { uid: 'plan', dataType: 'string' },
      ],
    },
  ],
};

const attr = (key: string): AudienceFilterNode => ({ type: 'attribute_condition', key, operator: 'is-set', values: [], valueKind: 'string', multivalue: false });
const param = (parameter: string): AudienceFilterNode => ({
  type: 'event_condition',
  key: `signup.${parameter}`,
  eventType: 'signup',
  parameter,
  operator: 'matches-string',
  values: ['x'],
  valueKind: 'string',
  multivalue: false,
});
const group = (...children: AudienceFilterNode[]): AudienceFilterNode => ({ type: 'group', operator: 'and', negate: false, children });

describe('piiConditionPath (ADR 0053)', () => {
  it('finds email and phone attributes, and event parameters declared email or phone, standalone or in a group_event', () => {
    expect(piiConditionPath(group(attr('city'), attr('_email')), catalogue)).toBe('root.children[1].key');
    expect(piiConditionPath(group(attr('city'), param('email')), catalogue)).toBe('root.children[1].key');
    const onEvent: AudienceFilterNode = { type: 'group_event', eventType: 'signup', negate: false, children: [param('plan') as never, param('mobile') as never] };
    expect(piiConditionPath(group(onEvent), catalogue)).toBe('root.children[0].children[1].key');
  });

  it('leaves other conditions alone, and unknown event types or parameters (the parser refuses them)', () => {
    expect(piiConditionPath(group(attr('city'), param('plan'), { type: 'group_event', eventType: 'signup', negate: false, children: [] }), catalogue)).toBeNull();
    expect(piiConditionPath({ ...param('email'), eventType: 'other' } as AudienceFilterNode, catalogue)).toBeNull();
  });
});
