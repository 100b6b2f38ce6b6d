import { CHANNEL_GROUPS, RESERVED_ATTRIBUTES, defaultGeneralConfig } from '@meld/contracts';
import { AttributeEntity, DATA_SOURCE } from '@meld/db';
import { ATTRIBUTION_WINDOWS, ProjectSchema } from '@meld/api';
import type { DataSource } from 'typeorm';
import { type AdminGateway, startAdminGateway, unique } from './admin-support/admin-gateway';
import { UNKNOWN_ID, createOrganization, createProject, fieldsOf } from './admin-support/fixtures';

describe('admin: projects', () => {
  let gw: AdminGateway;
  let org: string;
  beforeAll(async () => {
    gw = await startAdminGateway();
    org = await createOrganization(gw);
  });
  afterAll(() => gw?.close());

  it('creates a project: every spec field, defaults, partial config deep-merged, reserved attributes seeded', async () => {
    const res = await gw.call('POST', `/organizations/${org}/projects`, {
      name: 'Café Müller Shop',
      timezone: 'Europe/Paris',
      locale: 'fr_FR',
      mergingAttributes: ['_email', '_phone_mobile'],
      generalConfig: { channelSms: { autoCreateContactsOnOutbounds: true, optInKeywords: null } },
    });
    expect(res.status).toBe(201);
    const project = ProjectSchema.strict().parse(res.body.entity);
    expect(project.uid).toMatch(/^cafe-muller-shop(-[0-9a-f]{4})?$/);
    expect(project).toMatchObject({ timezone: 'Europe/Paris', locale: 'fr_FR', projectType: 'standard', projectStatus: 'active', defaultSmsSender: null });
    const defaults = defaultGeneralConfig();
    expect(project.generalConfig).toEqual({ ...defaults, channelSms: { ...defaults.channelSms, autoCreateContactsOnOutbounds: true, optInKeywords: null } });
    expect(project.attributionConfig.hoursSmsCampaignSent).toBe(72);
    expect(res.body.metadata).toEqual({
      organizationId: org,
      mergingAttributes: ['_email', '_phone_mobile'],
      uniqueAttributes: ['_user_id', '_email', '_phone_mobile'],
      dataMode: null,
      legalProfileStatus: 'missing',
      remerge: null,
    });
    const ds = gw.app.get<DataSource>(DATA_SOURCE);
    const seeded = await ds.getRepository(AttributeEntity).findBy({ projectId: project.id });
    expect(seeded.map((a) => a.uid).sort()).toEqual(RESERVED_ATTRIBUTES.map((a) => a.uid).sort());
    expect(seeded.every((a) => a.reserved)).toBe(true);
  });

  it('generates a different readable uid when the name is taken; 409 when a given uid is', async () => {
    const name = unique('Same Name');
    const a = await gw.call('POST', `/organizations/${org}/projects`, { name });
    const b = await gw.call('POST', `/organizations/${org}/projects`, { name });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.body.entity.uid).toMatch(new RegExp(`^${a.body.entity.uid}-[0-9a-f]{4}$`));
    const dup = await gw.call('POST', `/organizations/${org}/projects`, { name: 'x', uid: a.body.entity.uid });
    expect(dup.status).toBe(409);
    expect(dup.body.message).toBe(`project uid "${a.body.entity.uid}" already exists`);
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'x', uid: 'Not OK' }, 'uid'],
      [{ name: 'x', timezone: 'Mars/Olympus' }, 'timezone'],
      [{ name: 'x', mergingAttributes: ['_first_name'] }, 'mergingAttributes[0]'],
      [{ name: 'x', mergingAttributes: ['_email', 'nope'] }, 'mergingAttributes[1]'],
      [{ name: 'x', generalConfig: { channelSms: { defaultCompliancePolicy: 'maybe' } } }, 'generalConfig.channelSms.defaultCompliancePolicy'],
      [{ name: 'x', generalConfig: { channelFax: {} } }, 'generalConfig.channelFax'],
      [{ name: 'x', defaultSmsSender: UNKNOWN_ID }, 'defaultSmsSender'],
      [{ name: 'x', flavour: 'vanilla' }, 'flavour'],
      [{ name: 'x', businessContactsSize: 2_147_483_648 }, 'businessContactsSize'],
      // Not a country phone numbers belong to: every national number of the project would be invalid.
      [{ name: 'x', locale: 'en_UK' }, 'locale'],
      [{ name: 'x', locale: 'fr_XX' }, 'locale'],
      [{}, 'name'],
      // Text Postgres cannot store as sent: a lone surrogate was stored as U+FFFD with a 201.
      [{ name: 'Acme \ud800' }, 'name'],
      [{ name: 'x', generalConfig: { channelSms: { optOutKeywords: ['STOP', 'ARR\udc00T'] } } }, 'generalConfig.channelSms.optOutKeywords[1]'],
      [{ name: 'Acme \u0000' }, 'name'],
    ];
    for (const [body, path] of cases) {
      const res = await gw.call('POST', `/organizations/${org}/projects`, body);
      expect([path, res.status]).toEqual([path, 400]);
      expect(fieldsOf(res.body).map(([p]) => p)).toContain(path);
    }
    expect((await gw.call('POST', `/organizations/${UNKNOWN_ID}/projects`, { name: 'x' })).status).toBe(404);
  });

  it('reads and lists projects; 404 for an unknown uid or organization', async () => {
    const other = await createOrganization(gw);
    const p = await createProject(gw, other);
    const got = await gw.call('GET', `/projects/${p.uid}`);
    expect(got.status).toBe(200);
    expect(got.body.entity.uid).toBe(p.uid);
    const list = await gw.call('GET', `/organizations/${other}/projects`);
    expect(list.body).toMatchObject({ entity: [expect.objectContaining({ uid: p.uid })], metadata: { count: 1 } });
    expect((await gw.call('GET', `/projects/${unique('nope')}`)).status).toBe(404);
    expect((await gw.call('GET', `/organizations/${UNKNOWN_ID}/projects`)).status).toBe(404);
  });

  it('PATCHes writable fields, merges config, checks merging attributes against the catalogue and the default sender against the senders', async () => {
    const p = await createProject(gw, org);
    const res = await gw.call('PATCH', `/projects/${p.uid}`, {
      description: 'the shop',
      businessUrl: 'https://shop.example.com',
      testSmsNumbers: ['+33612345678'],
      lockedUntil: '2030-01-01T00:00:00+02:00',
      attributionConfig: { hoursCampaignCta: 48 },
      generalConfig: { channelEmail: { defaultCompliancePolicy: 'opt-in' } },
      dataMode: 'anonymized',
    });
    expect(res.status).toBe(200);
    expect(res.body.entity).toMatchObject({
      description: 'the shop',
      businessUrl: 'https://shop.example.com',
      testSmsNumbers: ['+33612345678'],
      lockedUntil: '2029-12-31T22:00:00.000+00:00',
      attributionConfig: { hoursCampaignCta: 48, hoursCampaignOpen: 24 },
    });
    expect(res.body.entity.generalConfig.channelEmail.defaultCompliancePolicy).toBe('opt-in');
    expect(res.body.entity.generalConfig.channelSms.defaultCompliancePolicy).toBe('opt-out');
    expect(res.body.metadata.dataMode).toBe('anonymized');

    expect(fieldsOf((await gw.call('PATCH', `/projects/${p.uid}`, { mergingAttributes: ['customer_no'] })).body)).toEqual([['mergingAttributes[0]', 'unknown attribute "customer_no"']]);
    await gw.call('POST', `/projects/${p.uid}/attributes`, { uid: 'customer_no', label: 'Customer number', type: 'string', unique: true });
    // A change of merging attributes asks identity-merge to merge the contacts again, in the same transaction (ADR 0331).
    const requests = (): Promise<Array<{ at: string; done_at: Date | null }>> =>
      gw.app.get<DataSource>(DATA_SOURCE).query(`SELECT requested_at::text AS at, done_at FROM remerge_requests WHERE project_id = $1`, [p.id]);
    expect(await requests()).toEqual([]);
    const merged = await gw.call('PATCH', `/projects/${p.uid}`, { mergingAttributes: ['_user_id', 'customer_no', '_email'] });
    expect(merged.body.metadata).toMatchObject({ mergingAttributes: ['customer_no', '_email'], uniqueAttributes: ['_user_id', 'customer_no', '_email'] });
    const [asked] = await requests();
    expect(asked).toMatchObject({ at: expect.any(String), done_at: null });
    expect(merged.body.metadata.remerge).toEqual({ status: 'in-progress', requestedAt: expect.stringMatching(/\+00:00$/), contactsDone: 0, doneAt: null });
    await gw.app.get<DataSource>(DATA_SOURCE).query(`UPDATE remerge_requests SET contacts_done = 12, done_at = now() WHERE project_id = $1`, [p.id]);
    expect((await gw.call('GET', `/projects/${p.uid}`)).body.metadata.remerge).toMatchObject({ status: 'done', contactsDone: 12, doneAt: expect.any(String) });
    // The same attributes in another order change nothing: no new request.
    await gw.call('PATCH', `/projects/${p.uid}`, { mergingAttributes: ['_email', 'customer_no'] });
    expect((await requests()).map((r) => r.at)).toEqual([asked.at]);
    // The locale's country is the default of national phone numbers (merge keys, the E.164 mobile):
    // another country merges the contacts again; another language of the same country does not.
    await gw.call('PATCH', `/projects/${p.uid}`, { locale: 'fr_FR' });
    await gw.app.get<DataSource>(DATA_SOURCE).query(`UPDATE remerge_requests SET done_at = now() WHERE project_id = $1`, [p.id]);
    const [french] = await requests();
    expect((await gw.call('PATCH', `/projects/${p.uid}`, { locale: 'en_FR' })).body.entity.locale).toBe('en_FR');
    expect(fieldsOf((await gw.call('PATCH', `/projects/${p.uid}`, { locale: 'en_UK' })).body)).toEqual([['locale', '"UK" is not a country code phone numbers belong to (ISO 3166-1 alpha-2, e.g. en_GB not en_UK)']]);
    expect(await requests()).toEqual([french]);
    const relocated = await gw.call('PATCH', `/projects/${p.uid}`, { locale: 'en_GB' });
    expect(relocated.body.metadata.remerge).toMatchObject({ status: 'in-progress', contactsDone: 0, doneAt: null });
    const [british] = await requests();
    expect([british.at > french.at, british.done_at]).toEqual([true, null]);

    expect(fieldsOf((await gw.call('PATCH', `/projects/${p.uid}`, { defaultSmsSender: UNKNOWN_ID })).body)).toEqual([['defaultSmsSender', expect.stringContaining('no SMS sender')]]);
    const sender = await gw.call('POST', `/projects/${p.uid}/senders`, { channel: 'sms', alias: 'SHOP', name: 'Shop', status: 'active' });
    const withSender = await gw.call('PATCH', `/projects/${p.uid}`, { defaultSmsSender: sender.body.entity.id });
    expect(withSender.body.entity.defaultSmsSender).toBe(sender.body.entity.id);
    // An id in capitals is the same sender, stored as Meld writes ids: messaging's `default` and readiness compare it as text.
    const inCapitals = await gw.call('PATCH', `/projects/${p.uid}`, { defaultSmsSender: sender.body.entity.id.toUpperCase() });
    expect([inCapitals.status, inCapitals.body.entity.defaultSmsSender]).toEqual([200, sender.body.entity.id]);

    expect(fieldsOf((await gw.call('PATCH', `/projects/${p.uid}`, { uid: 'renamed' })).body)).toEqual([['uid', 'unknown field']]);
    // The column is a Postgres integer: one past its largest value is the caller's 400, not Postgres' 22003 (a 500).
    expect((await gw.call('PATCH', `/projects/${p.uid}`, { businessContactsSize: 2_147_483_647 })).body.entity.businessContactsSize).toBe(2_147_483_647);
    expect(fieldsOf((await gw.call('PATCH', `/projects/${p.uid}`, { businessContactsSize: 3_000_000_000 })).body)).toEqual([['businessContactsSize', expect.stringContaining('2147483647')]]);
    expect((await gw.call('PATCH', `/projects/${unique('nope')}`, { name: 'x' })).status).toBe(404);
  });

  it('refuses a keyword twice in a list or in both lists, compared as the inbound matcher compares them (ADR 0183), with a 400 naming it', async () => {
    const sms = (block: Record<string, unknown>) => ({ name: 'x', generalConfig: { channelSms: block } });
    const created: [Record<string, unknown>, string][] = [
      [sms({ optOutKeywords: ['STOP', 'ARRÊT', ' arret! '] }), 'generalConfig.channelSms.optOutKeywords[2]'],
      [sms({ optInKeywords: ['START', 'ＳＴＡＲＴ'] }), 'generalConfig.channelSms.optInKeywords[1]'],
      [{ name: 'x', generalConfig: { channelEmail: { optInKeywords: ['go', 'Go'] } } }, 'generalConfig.channelEmail.optInKeywords[1]'],
      // In both lists it would only ever opt out; so would one of the carrier-standard opt-outs, always honoured.
      [sms({ optOutKeywords: ['ARRET'], optInKeywords: ['START', 'arrêt'] }), 'generalConfig.channelSms.optInKeywords[1]'],
      [sms({ optInKeywords: ['Cancel'] }), 'generalConfig.channelSms.optInKeywords[0]'],
    ];
    for (const [body, path] of created) {
      const res = await gw.call('POST', `/organizations/${org}/projects`, body);
      expect([path, res.status, fieldsOf(res.body).map(([p]) => p)]).toEqual([path, 400, [path]]);
    }
    // Against the stored other list on a PATCH of one.
    const p = await createProject(gw, org, { generalConfig: { channelSms: { optOutKeywords: ['ARRET'], optInKeywords: ['GO'] } } });
    const patch = (block: Record<string, unknown>) => gw.call('PATCH', `/projects/${p.uid}`, { generalConfig: { channelSms: block } });
    expect(fieldsOf((await patch({ optInKeywords: ['Arrêt'] })).body).map(([p]) => p)).toEqual(['generalConfig.channelSms.optInKeywords[0]']);
    expect(fieldsOf((await patch({ optOutKeywords: ['STOP', 'go'] })).body).map(([p]) => p)).toEqual(['generalConfig.channelSms.optOutKeywords[1]']);
    const ok = await patch({ optOutKeywords: ['STOP', 'ARRET'], optInKeywords: ['GO', 'START'] });
    expect([ok.status, ok.body.entity.generalConfig.channelSms]).toEqual([200, expect.objectContaining({ optOutKeywords: ['STOP', 'ARRET'], optInKeywords: ['GO', 'START'] })]);
  });

  it('concurrent partial PATCHes each keep what the others set: each is merged over the row as it is when written', async () => {
    const p = await createProject(gw, org);
    // One block and one window per request, all at once, in a few rounds: a merge over a row read
    // before another PATCH committed writes that PATCH's block back as it was.
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        CHANNEL_GROUPS.map((group, i) =>
          gw.call('PATCH', `/projects/${p.uid}`, { generalConfig: { [group]: { optOutKeywords: [`STOP${round}${i}`] } }, attributionConfig: { [ATTRIBUTION_WINDOWS[i]!]: 100 * round + i } }),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(CHANNEL_GROUPS.map(() => 200));
      const { entity } = (await gw.call('GET', `/projects/${p.uid}`)).body;
      expect(CHANNEL_GROUPS.map((group) => entity.generalConfig[group].optOutKeywords)).toEqual(CHANNEL_GROUPS.map((_, i) => [`STOP${round}${i}`]));
      expect(CHANNEL_GROUPS.map((_, i) => entity.attributionConfig[ATTRIBUTION_WINDOWS[i]!])).toEqual(CHANNEL_GROUPS.map((_, i) => 100 * round + i));
    }
  });

  it('stores a time zone as its tzdata name at create and PATCH; a well-cased alias as given', async () => {
    const created = await gw.call('POST', `/organizations/${org}/projects`, { name: unique('Zone'), timezone: 'europe/paris' });
    expect([created.status, created.body.entity.timezone]).toEqual([201, 'Europe/Paris']);
    const uid: string = created.body.entity.uid;
    expect((await gw.call('GET', `/projects/${uid}`)).body.entity.timezone).toBe('Europe/Paris');
    expect((await gw.call('PATCH', `/projects/${uid}`, { timezone: 'Asia/Kolkata' })).body.entity.timezone).toBe('Asia/Kolkata');
    expect((await gw.call('GET', `/projects/${uid}`)).body.entity.timezone).toBe('Asia/Kolkata');
    expect((await gw.call('PATCH', `/projects/${uid}`, { timezone: 'AMERICA/NEW_YORK' })).body.entity.timezone).toBe('America/New_York');
    const patched = await createProject(gw, org);
    expect((await gw.call('PATCH', `/projects/${patched.uid}`, { timezone: 'europe/paris' })).body.entity.timezone).toBe('Europe/Paris');
    // What the product API's project read and the event histograms load (ADR 0335).
    const rows = await gw.app.get<DataSource>(DATA_SOURCE).query(`SELECT timezone FROM projects WHERE uid = ANY($1) ORDER BY timezone`, [[uid, patched.uid]]);
    expect(rows).toEqual([{ timezone: 'America/New_York' }, { timezone: 'Europe/Paris' }]);
  });

  it('sets the legal profile status (PUT)', async () => {
    const p = await createProject(gw, org);
    const res = await gw.call('PUT', `/projects/${p.uid}/legal-profile`, { status: 'verified' });
    expect(res).toMatchObject({ status: 200, body: { entity: { project: p.uid, status: 'verified' } } });
    expect((await gw.call('GET', `/projects/${p.uid}`)).body.metadata.legalProfileStatus).toBe('verified');
    expect(fieldsOf((await gw.call('PUT', `/projects/${p.uid}/legal-profile`, { status: 'approved' })).body)).toEqual([['status', expect.any(String)]]);
    expect((await gw.call('PUT', `/projects/${unique('nope')}/legal-profile`, { status: 'pending' })).status).toBe(404);
  });
});
