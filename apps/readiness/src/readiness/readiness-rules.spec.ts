import { channelReport, projectReport, type SenderSnapshot, type SetupSnapshot } from './readiness-rules';

type Country = { country: string; accepted: boolean; effectiveStatus: string; price: number };
/** A sender with these country rows, projected as the repository's statement does. */
const sender = (id: string, { countries = [] as Country[], ...extra }: Partial<Omit<SenderSnapshot, 'acceptedCountries' | 'notActive' | 'unpriced'>> & { countries?: Country[] } = {}): SenderSnapshot => {
  const accepted = countries.filter((c) => c.accepted).sort((a, b) => (a.country < b.country ? -1 : 1));
  return {
    id,
    channel: 'sms',
    alias: id.toUpperCase(),
    name: `${id} sender`,
    status: 'active',
    acceptedCountries: accepted.map((c) => c.country),
    notActive: accepted.filter((c) => c.effectiveStatus !== 'active').map((c) => [c.country, c.effectiveStatus]),
    unpriced: accepted.filter((c) => c.price <= 0).map((c) => [c.country, c.effectiveStatus]),
    ...extra,
  };
};
const country = (code: string, extra: Partial<Country> = {}): Country => ({ country: code, accepted: true, effectiveStatus: 'active', price: 0.05, ...extra });
const setup = (extra: Partial<SetupSnapshot> = {}): SetupSnapshot => ({
  legalProfileStatus: 'verified',
  defaultSmsSender: 'a',
  prepaid: false,
  funds: 0,
  hasAudienceContact: true,
  senders: [sender('a', { countries: [country('FR')] })],
  ...extra,
});

describe('project readiness', () => {
  it('is operational with every blocker done; funds disabled for an organization that is not prepaid', () => {
    const r = projectReport(setup());
    expect(r).toMatchObject({ scope: 'project', channel: null, percent: 100, operational: true, reach: null, warnings: [] });
    expect(r.steps).toEqual([
      { key: 'import', completed: true, isBlocker: false, disabled: false },
      { key: 'channels', completed: true, isBlocker: true, disabled: false },
      { key: 'legal_profile', completed: true, isBlocker: true, disabled: false },
      { key: 'funds', completed: false, isBlocker: false, disabled: true },
    ]);
  });

  it('percent is completed over not-disabled steps, rounded down', () => {
    // 1 of 3 → 33; 2 of 4 → 50; 0 → 0
    expect(projectReport(setup({ hasAudienceContact: false, senders: [], legalProfileStatus: 'pending' })).percent).toBe(0);
    expect(projectReport(setup({ senders: [], legalProfileStatus: 'pending' })).percent).toBe(33);
    expect(projectReport(setup({ senders: [], prepaid: true, funds: 0 })).percent).toBe(50);
    expect(projectReport(setup({ prepaid: true, funds: 0 })).percent).toBe(75);
  });

  it('contacts are not a blocker; senders, the legal profile and prepaid funds are', () => {
    expect(projectReport(setup({ hasAudienceContact: false })).operational).toBe(true);
    expect(projectReport(setup({ senders: [sender('a', { status: 'pending' })] })).operational).toBe(false);
    expect(projectReport(setup({ legalProfileStatus: 'pending' })).operational).toBe(false);
    expect(projectReport(setup({ prepaid: true, funds: 0 })).operational).toBe(false);
    expect(projectReport(setup({ prepaid: true, funds: -1 })).operational).toBe(false);
    expect(projectReport(setup({ prepaid: true, funds: 0.01 })).operational).toBe(true);
  });

  it('an active RCS agent alone completes `channels`', () => {
    expect(projectReport(setup({ senders: [sender('r', { channel: 'rcs' })] })).steps[1].completed).toBe(true);
  });
});

describe('channel readiness', () => {
  it('sms: legal_profile, add_sender, funds; rcs: add_agent', () => {
    expect(channelReport('sms', setup()).steps.map((s) => s.key)).toEqual(['legal_profile', 'add_sender', 'funds']);
    const rcs = channelReport('rcs', setup());
    expect(rcs.steps.map((s) => [s.key, s.completed])).toEqual([
      ['legal_profile', true],
      ['add_agent', false],
      ['funds', false],
    ]);
    expect(rcs.operational).toBe(false);
    expect(rcs.percent).toBe(50);
  });

  it('reach: accepted countries of active senders, deduplicated and sorted; no-country senders omitted', () => {
    const r = channelReport(
      'sms',
      setup({
        senders: [
          sender('z', { alias: 'ZED', countries: [country('GB'), country('BE', { effectiveStatus: 'blocked' }), country('DE', { accepted: false })] }),
          sender('a', { alias: 'ALPHA', countries: [country('FR'), country('BE')] }),
          sender('p', { alias: 'PAUSED', status: 'inactive', countries: [country('IT')] }),
          sender('n', { alias: 'NONE', countries: [country('ES', { accepted: false })] }),
          sender('r', { alias: 'AGENT', channel: 'rcs', countries: [country('NL')] }),
        ],
      }),
    );
    expect(r.reach).toEqual({ reachableCountries: ['BE', 'FR', 'GB'], senders: { ALPHA: ['BE', 'FR'], ZED: ['BE', 'GB'] } });
    expect(Object.keys(r.reach!.senders)).toEqual(['ALPHA', 'ZED']);
  });

  it('two senders with one alias share its entry; an alias named like an Object member is a plain key', () => {
    const r = channelReport(
      'sms',
      setup({ senders: [sender('a', { alias: '__proto__', countries: [country('FR')] }), sender('b', { alias: '__proto__', countries: [country('BE')] }), sender('c', { alias: 'constructor', countries: [country('FR')] })] }),
    );
    expect(Object.getPrototypeOf(r.reach!.senders)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(r.reach))).toEqual(JSON.parse('{"reachableCountries":["BE","FR"],"senders":{"__proto__":["BE","FR"],"constructor":["FR"]}}'));
  });

  it('rcs reach names agents by agent name (their alias)', () => {
    const r = channelReport('rcs', setup({ senders: [sender('r', { alias: 'meld_agent', channel: 'rcs', countries: [country('DE')] })] }));
    expect(r.reach).toEqual({ reachableCountries: ['DE'], senders: { meld_agent: ['DE'] } });
  });
});

describe('warnings', () => {
  it('sender_not_effective: accepted by carriers, effective status not active, on active senders only', () => {
    const s = setup({
      senders: [
        sender('b', { name: 'Beta', countries: [country('FR', { effectiveStatus: 'pending' }), country('DE', { accepted: false, effectiveStatus: 'blocked' })] }),
        sender('a', { name: 'Alpha', countries: [country('IT', { effectiveStatus: 'restricted' }), country('BE', { effectiveStatus: 'blocked' }), country('GB')] }),
        sender('x', { name: 'Paused', status: 'inactive', countries: [country('ES', { effectiveStatus: 'blocked' })] }),
      ],
    });
    const w = projectReport(s).warnings.find((x) => x.key === 'sender_not_effective');
    expect(w).toEqual({
      key: 'sender_not_effective',
      severity: 'warning',
      count: 3,
      rows: [
        { senderId: 'a', senderName: 'Alpha', country: 'BE', effectiveStatus: 'blocked' },
        { senderId: 'a', senderName: 'Alpha', country: 'IT', effectiveStatus: 'restricted' },
        { senderId: 'b', senderName: 'Beta', country: 'FR', effectiveStatus: 'pending' },
      ],
    });
    // Reach still counts them: it follows the carriers' acceptance.
    expect(channelReport('sms', s).reach!.reachableCountries).toEqual(['BE', 'FR', 'GB', 'IT']);
  });

  it('default_sender_not_active, no_default_sms_sender, sender_reaches_no_country, sender_without_price', () => {
    const paused = setup({ defaultSmsSender: 'p', senders: [sender('p', { status: 'pending', countries: [country('FR')] }), sender('a', { countries: [country('FR', { price: 0 })] }), sender('e')] });
    expect(projectReport(paused).warnings.map((w) => [w.key, w.severity, w.rows.map((r) => [r.senderId, r.country, r.effectiveStatus])])).toEqual([
      ['default_sender_not_active', 'warning', [['p', null, 'pending']]],
      ['sender_reaches_no_country', 'warning', [['e', null, 'active']]],
      ['sender_without_price', 'info', [['a', 'FR', 'active']]],
    ]);
    const noDefault = projectReport(setup({ defaultSmsSender: null }));
    expect(noDefault.warnings).toEqual([{ key: 'no_default_sms_sender', severity: 'info', count: 1, rows: [{ senderId: 'a', senderName: 'a sender', country: null, effectiveStatus: 'active' }] }]);
  });

  it('the rcs channel report leaves out SMS senders and the SMS default', () => {
    const s = setup({ defaultSmsSender: null, senders: [sender('a', { countries: [country('FR', { effectiveStatus: 'pending' })] }), sender('r', { channel: 'rcs', countries: [country('DE', { effectiveStatus: 'blocked' })] })] });
    expect(channelReport('rcs', s).warnings.map((w) => [w.key, w.rows.map((r) => r.senderId)])).toEqual([['sender_not_effective', ['r']]]);
    expect(channelReport('sms', s).warnings.map((w) => [w.key, w.rows.map((r) => r.senderId)])).toEqual([
      ['sender_not_effective', ['a']],
      ['no_default_sms_sender', ['a']],
    ]);
  });
});
