import { RESERVED_ATTRIBUTES } from '@meld/contracts';
import { checkMergingAttributes } from './merging-attributes.rule';

const catalogue = [...RESERVED_ATTRIBUTES, { uid: 'customer_no', unique: true, multivalue: false }, { uid: 'tags', unique: false, multivalue: true }];
const fieldsOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as { getResponse(): { details: { fields: unknown[] } } }).getResponse().details.fields;
  }
  throw new Error('expected a 400');
};

describe('merging attributes rule', () => {
  it('keeps unique-capable attributes in order and drops _user_id', () => {
    expect(checkMergingAttributes(['_email', '_user_id', 'customer_no'], catalogue)).toEqual(['_email', 'customer_no']);
    expect(checkMergingAttributes([], catalogue)).toEqual([]);
  });

  it('names the bad entry: unknown, not unique, duplicated', () => {
    expect(fieldsOf(() => checkMergingAttributes(['_email', 'nope'], catalogue))).toEqual([{ path: 'mergingAttributes[1]', message: 'unknown attribute "nope"' }]);
    expect(fieldsOf(() => checkMergingAttributes(['_first_name'], catalogue))).toEqual([
      { path: 'mergingAttributes[0]', message: expect.stringContaining('cannot merge contacts (unique-capable: _user_id, _email, _phone_mobile, customer_no)') },
    ]);
    expect(fieldsOf(() => checkMergingAttributes(['_email', '_email'], catalogue))).toEqual([{ path: 'mergingAttributes[1]', message: '"_email" is listed twice' }]);
  });
});
