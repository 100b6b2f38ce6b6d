import { pairParameters } from './parameter-pairs';

describe('id and name parameters (probe rule 13, ADR 0167)', () => {
  it('pairs an id with the name sharing its prefix, whatever the separators and case', () => {
    const { nameOf, idOf } = pairParameters(['amount', 'product-id', 'product-name', 'category_id', 'category_title', 'orderUuid', 'orderLabel', 'utm-id', 'utm-source', 'utm-campaign']);
    expect([...nameOf]).toEqual([
      ['product-id', 'product-name'],
      ['category_id', 'category_title'],
      ['orderUuid', 'orderLabel'],
      ['utm-id', 'utm-campaign'],
    ]);
    expect(idOf.get('utm-campaign')).toBe('utm-id');
  });

  it('leaves an id without a name, and a name without an id, unpaired', () => {
    const { nameOf } = pairParameters(['order-id', 'product-name', 'customer-id', 'customer']);
    expect(nameOf.size).toBe(0);
  });

  it('prefers name over title and pairs each name once', () => {
    expect([...pairParameters(['sku-id', 'sku-title', 'sku-name']).nameOf]).toEqual([['sku-id', 'sku-name']]);
    expect([...pairParameters(['item-id', 'item_id', 'item-name']).nameOf]).toEqual([['item-id', 'item-name']]);
  });
});
