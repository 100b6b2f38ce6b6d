import { computeAudience, type DataSourceInfo, type SourceContact } from './merge-core';
import { applySuppression } from './merge-suppression';

const sources = new Map<string, DataSourceInfo>([
  ['api', { id: 'api', priority: 0, isIngest: true }],
  ['crm', { id: 'crm', priority: 10, isIngest: false }],
  ['messaging', { id: 'messaging', priority: 0, isIngest: false }],
  ['shop', { id: 'shop', priority: 5, isIngest: false }],
]);

const contact = (dataSourceId: string, userId: string, attributes: SourceContact['attributes'], seq: number): SourceContact => ({
  dataSourceId,
  userId,
  attributes,
  attributeAt: Object.fromEntries(Object.keys(attributes).map((k) => [k, '2026-01-01T00:00:00Z'])),
  seq,
});

function merged(contacts: SourceContact[]) {
  const result = computeAudience(contacts, sources, { mergingAttributes: ['_email'], locale: 'fr_FR' }, new Map(), (ref) => `aud:${ref}`);
  applySuppression(result.audiences, contacts, sources);
  return result.audiences;
}

describe('applySuppression (ADRs 0048, 0361)', () => {
  it('keeps a true held by any member over the priority winner, on each channel, with the lineage of the best holder', () => {
    const [audience] = merged([
      contact('crm', 'c1', { _email: 'a@x.com', _suppressed_sms: false, _suppressed_email: 'yes' }, 1),
      contact('messaging', 'm1', { _email: 'a@x.com', _suppressed_sms: true }, 2),
      contact('shop', 's1', { _email: 'a@x.com', _suppressed_sms: true, _suppressed_rcs: true }, 3),
    ]);
    expect(audience!.attributes).toMatchObject({ _suppressed_sms: true, _suppressed_rcs: true, _suppressed_email: 'yes' });
    expect(audience!.lineage).toMatchObject({ _suppressed_sms: 'shop', _suppressed_rcs: 'shop', _suppressed_email: 'crm' });
  });

  it('leaves contacts no member suppresses as the core merged them, and reads no inherited value', () => {
    const inherited = Object.assign(Object.create({ _suppressed_sms: true }), { _email: 'b@x.com' });
    const [audience] = merged([contact('crm', 'c1', { _email: 'b@x.com', _suppressed_sms: false }, 1), contact('api', 'a1', inherited, 2)]);
    expect(audience!.attributes._suppressed_sms).toBe(false);
    expect(audience!.lineage._suppressed_sms).toBe('crm');
    expect(Object.hasOwn(audience!.attributes, '_suppressed_whatsapp')).toBe(false);
  });
});
