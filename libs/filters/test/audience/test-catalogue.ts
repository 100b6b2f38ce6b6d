import type { FilterCatalogue } from '../../src/audience/types';

/**
 * A catalogue with an attribute and a parameter of every type, for the lib's own tests. Some
 * single-valued attributes have a slot column and some not, so filters mixing them read both
 * forms; the multivalue `tags` has a slot that must be ignored (multivalue reads the arrays).
 */
export const TEST_CATALOGUE: FilterCatalogue = {
  attributes: [
    { uid: 'city', type: 'string', multivalue: false, slot: 0 },
    { uid: 'tags', type: 'string', multivalue: true, slot: 5 },
    { uid: '_email', type: 'email', multivalue: false, slot: 1 },
    { uid: '_phone_mobile', type: 'phone', multivalue: false },
    { uid: 'score', type: 'number', multivalue: false, slot: 0 },
    { uid: 'lucky', type: 'number', multivalue: true },
    { uid: 'vip', type: 'boolean', multivalue: false, slot: 1 },
    { uid: 'birthday', type: 'date', multivalue: false, slot: 2 },
    { uid: 'last_login', type: 'datetime', multivalue: false },
    { uid: 'visits', type: 'datetime', multivalue: true },
  ],
  eventTypes: [
    {
      uid: 'purchase',
      parameters: [
        { uid: 'product-id', dataType: 'string' },
        { uid: 'categories', dataType: 'string', multiValue: 5 },
        { uid: 'amount', dataType: 'number' },
        { uid: 'sizes', dataType: 'number', multiValue: 3 },
        { uid: 'gift', dataType: 'boolean' },
        { uid: 'delivery', dataType: 'date' },
        { uid: 'paid-at', dataType: 'datetime' },
      ],
    },
    { uid: 'page.view', parameters: [{ uid: 'url', dataType: 'string' }] },
    { uid: 'page', parameters: [{ uid: 'view.url', dataType: 'string' }] },
    { uid: 'login', parameters: [] },
  ],
};

/** The same catalogue without slots: every attribute read from the arrays. */
export const withoutSlots = (catalogue: FilterCatalogue): FilterCatalogue => ({ ...catalogue, attributes: catalogue.attributes.map(({ slot: _slot, ...a }) => a) });
