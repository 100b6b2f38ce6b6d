import type { FilterCatalogue } from './types';

/** A catalogue with an attribute and a parameter of every type, for the lib's own tests. */
export const TEST_CATALOGUE: FilterCatalogue = {
  attributes: [
    { uid: 'city', type: 'string', multivalue: false },
    { uid: 'tags', type: 'string', multivalue: true },
    { uid: '_email', type: 'email', multivalue: false },
    { uid: '_phone_mobile', type: 'phone', multivalue: false },
    { uid: 'score', type: 'number', multivalue: false },
    { uid: 'lucky', type: 'number', multivalue: true },
    { uid: 'vip', type: 'boolean', multivalue: false },
    { uid: 'birthday', type: 'date', multivalue: false },
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
