import { TOP_VALUES_OMITTED as R, nameReason, reasonAfterMeasuring, reasonBeforeMeasuring } from './top-values-policy';

const attr = (uid: string, extra: Partial<{ type: 'string' | 'datetime' | 'number'; named: boolean; identity: boolean }> = {}) =>
  ({ uid, label: uid, type: 'string', multivalue: false, enabled: true, visible: true, internal: false, unique: false, slot: null, named: false, identity: false, ...extra }) as Parameters<typeof reasonBeforeMeasuring>[0];

describe('top values policy (probe rule 7)', () => {
  it.each([
    ['order_id', R.identifier],
    ['externalId', R.identifier],
    ['session-uuid', R.identifier],
    ['last_order_at', R.timestamp],
    ['signupDate', R.timestamp],
    ['order_amount', R.quantity],
    ['lifetimeRevenue', R.quantity],
    ['loyalty_tier', undefined],
    ['idea', undefined],
    // Plurals of the rule words: a multivalue attribute is named for the many values it holds.
    ['push_tokens', R.identifier],
    ['apiKeys', R.identifier],
    ['order_refs', R.identifier],
    ['file_hashes', R.identifier],
    ['visit_dates', R.timestamp],
    ['item_prices', R.quantity],
    ['order_quantities', R.quantity],
    ['add_ons', undefined],
    ['monkeys', undefined],
    ['status', undefined],
  ])('%s → %s', (uid, reason) => expect(nameReason(attr(uid))).toBe(reason));

  it('reads a datetime type as a timestamp', () => expect(nameReason(attr('seen', { type: 'datetime' }))).toBe(R.timestamp));

  it('lets a named attribute override the name rule, not the identity rule', () => {
    expect(reasonBeforeMeasuring(attr('order_id', { named: true }))).toBeUndefined();
    expect(reasonBeforeMeasuring(attr('_email', { named: true, identity: true }))).toBe(R.identity);
  });

  it('withholds too many distinct values and one value per contact, never a short list', () => {
    expect(reasonAfterMeasuring(10_001, 1_000_000)).toBe(R.tooManyDistinct);
    expect(reasonAfterMeasuring(950, 1000)).toBe(R.onePerContact);
    expect(reasonAfterMeasuring(10, 10)).toBeUndefined();
    expect(reasonAfterMeasuring(0, 0)).toBeUndefined();
    expect(reasonAfterMeasuring(undefined, 10)).toBe(R.notMeasured);
  });
});
