import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { HTML_PAGE_HEADERS } from '@meld/api';
import { type Json, principalHeader } from '@meld/fixtures';
import { waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { type Smsc, type Tenancy, seedContact, seedSmsTenancy, startMessaging } from './app.fixture';

type SmsTenancy = Tenancy & { sender: { id: string } };

// Short links, the unsubscribe page and inbound keywords on the real stores with the SMSC
// simulator (ADRs 0181-0183). Consent lands on the `meld-messaging` source contact and in
// the outbox for identity-merge; test/e2e/sms-opt-out.e2e-spec.ts follows it to the next send.
describe('messaging: short links, unsubscribe page, inbound keywords', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let smsc: Smsc;
  let t: SmsTenancy;

  beforeAll(async () => {
    ({ app, base, db, smsc } = await startMessaging());
    t = await seedSmsTenancy(db);
  });
  afterAll(async () => {
    await app?.close();
    await smsc?.close();
  });

  /** An audience contact as merged from one member of a data source of the project. */
  const memberContact = async (phone: string) => {
    const userId = `u-${randomUUID().slice(0, 8)}`;
    const audienceId = await seedContact(db, t.project.id, { _user_id: userId, _phone_mobile: phone });
    await db.query(`INSERT INTO audience_members (project_id, data_source_id, user_id, audience_id) VALUES ($1, $2, $3, $4)`, [t.project.id, t.dataSource.id, userId, audienceId]);
    return { audienceId, userId };
  };
  const send = async (target: string, text: string) => {
    const url = `/v1/project/${t.project.uid}/channel/sms/sms/direct/default/${encodeURIComponent(target)}`;
    const res = await fetch(`${base}${url}`, {
      method: 'POST',
      headers: { ...principalHeader(t, { scopes: ['PROJECT_DIRECT_WRITE'] }, { app: 'messaging', method: 'POST', url }), 'content-type': 'application/json' },
      body: JSON.stringify({ text }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const messagingConsent = async (userId: string) =>
    (await db.query(`SELECT s.attributes->>'_consent_sms' AS c FROM source_contacts s JOIN data_sources d ON d.id = s.data_source_id AND d.uid = 'meld-messaging' WHERE s.project_id = $1 AND s.user_id = $2`, [t.project.id, userId]))[0]?.c ?? null;

  it('substitutes the links, counts parts after substitution and stores the text as sent', async () => {
    const { audienceId } = await memberContact('+447400123601');
    const { status, body } = await send(audienceId, `Track it: {{short:https://shop.test/orders/4821?utm=sms&x=${'y'.repeat(150)}}} Stop: {{unsubscribe}}`);
    expect(status).toBe(201);
    expect(body.entity).toMatchObject({ encoding: 'GSM-7', messagesCount: 1 });
    const [{ text }] = await db.query(`SELECT text FROM sms_messages WHERE id = $1`, [body.entity.id]);
    expect(text).toMatch(/^Track it: http:\/\/127\.0\.0\.1:8080\/l\/[0-9A-Za-z]{8} Stop: http:\/\/127\.0\.0\.1:8080\/u\/[0-9A-Za-z]{22}$/);
  });

  it('a 400 naming text for a {{short:}} that is not an http(s) URL', async () => {
    const { audienceId } = await memberContact('+447400123602');
    const { status, body } = await send(audienceId, 'go {{short:javascript:alert(1)}}');
    expect([status, body.details.fields[0].path]).toEqual([400, 'text']);
  });

  it('a short link 302s to its URL, counts the click (a HEAD is none) and puts _sms_click on the timeline', async () => {
    const { audienceId, userId } = await memberContact('+447400123603');
    const { body } = await send(audienceId, 'See {{short:https://shop.test/o/1?a=b}}');
    const [{ code }] = await db.query(`SELECT code FROM sms_links WHERE sms_id = $1 AND kind = 'short'`, [body.entity.id]);
    // A HEAD (a link checker, a preview) answers as the GET does, but is no click.
    const head = await fetch(`${base}/l/${code}`, { method: 'HEAD', redirect: 'manual' });
    expect([head.status, head.headers.get('location')]).toEqual([302, 'https://shop.test/o/1?a=b']);
    expect((await db.query(`SELECT clicks FROM sms_links WHERE code = $1`, [code]))[0].clicks).toBe(0);
    expect((await fetch(`${base}/l/NOPE0000`, { method: 'HEAD', redirect: 'manual' })).status).toBe(404);
    const res = await fetch(`${base}/l/${code}`, { redirect: 'manual' });
    expect([res.status, res.headers.get('location')]).toEqual([302, 'https://shop.test/o/1?a=b']);
    expect((await db.query(`SELECT clicks FROM sms_links WHERE code = $1`, [code]))[0].clicks).toBe(1);
    // The event went through the outbox in the click's transaction (the relay may have published it already); its source contact stays.
    expect(await db.query(`SELECT 1 FROM source_contacts s JOIN data_sources d ON d.id = s.data_source_id AND d.uid = 'meld-messaging' WHERE s.project_id = $1 AND s.user_id = $2`, [t.project.id, userId])).toHaveLength(1);
    expect((await fetch(`${base}/l/NOPE0000`, { redirect: 'manual' })).status).toBe(404);
  });

  it('the unsubscribe GET and HEAD only ask; the confirming POST records the opt-out once, with no cookie or form field (ADR 0182 amended)', async () => {
    const { audienceId, userId } = await memberContact('+447400123604');
    const { body } = await send(audienceId, 'Stop: {{unsubscribe}}');
    const [{ code }] = await db.query(`SELECT code FROM sms_links WHERE sms_id = $1 AND kind = 'unsubscribe'`, [body.entity.id]);
    const page = await fetch(`${base}/u/${code}`);
    const html = await page.text();
    expect([page.status, html]).toEqual([200, expect.stringContaining('Stop SMS from Meld?')]);
    expect(html).not.toContain('+447400123604');
    // Nothing for a browser that blocks cookies to lose: the link code is the capability.
    expect([page.headers.get('set-cookie'), html]).toEqual([null, expect.stringContaining(`<form method="post" action="/u/${code}"><button type="submit">`)]);
    const head = await fetch(`${base}/u/${code}`, { method: 'HEAD' });
    expect([head.status, head.headers.get('set-cookie')]).toEqual([200, null]);
    const pageHeaders = (res: Response) => Object.fromEntries(Object.keys(HTML_PAGE_HEADERS).map((name) => [name, res.headers.get(name)]));
    expect(pageHeaders(page)).toEqual(HTML_PAGE_HEADERS);
    // The POST's other checks hold: a body no page posts (compressed, of a type no parser takes) records nothing.
    const odd = (headers: Record<string, string>, body: string | Buffer) => fetch(`${base}/u/${code}`, { method: 'POST', headers, body });
    expect((await odd({ 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'gzip' }, gzipSync('x=1'))).status).toBe(415);
    expect((await odd({ 'content-type': 'application/xml' }, '<x/>')).status).toBe(400);
    expect(await messagingConsent(userId)).toBeNull();
    const post = () => fetch(`${base}/u/${code}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
    const done = await post();
    expect([done.status, await done.text()]).toEqual([200, expect.stringContaining('You are unsubscribed')]);
    expect(await messagingConsent(userId)).toBe('opt-out');
    expect(pageHeaders(done)).toEqual(HTML_PAGE_HEADERS);
    const [{ confirmed }] = await db.query(`SELECT confirmed_at AS confirmed FROM sms_links WHERE code = $1`, [code]);
    const again = await post();
    expect([again.status, await again.text()]).toEqual([200, expect.stringContaining('You are unsubscribed')]);
    expect((await db.query(`SELECT confirmed_at AS confirmed FROM sms_links WHERE code = $1`, [code]))[0].confirmed).toEqual(confirmed);
    expect((await fetch(`${base}/u/NOPE0000NOPE0000NOPE00`, { method: 'POST' })).status).toBe(404);
  });

  it('an inbound STOP from the SMSC opts the number out, START opts it back in; other texts change nothing', async () => {
    const { userId } = await memberContact('+447400123605');
    await waitFor('SMSC bound', async () => (await smsc.mo({ from: '447400000000', to: 'NOBODY', text: 'hi' })).length > 0);
    expect(await smsc.mo({ from: '447400123605', to: 'MELD', text: 'please stop' })).toEqual([0]);
    expect(await messagingConsent(userId)).toBeNull();
    expect(await smsc.mo({ from: '447400123605', to: 'MELD', text: 'Stop' })).toEqual([0]);
    expect(await messagingConsent(userId)).toBe('opt-out');
    await smsc.mo({ from: '447400123605', to: 'MELD', text: 'START' });
    expect(await messagingConsent(userId)).toBe('opt-in');
  });

  it('a STOP to a number sender opts out whether its alias and the SMSC write the number with + or without (SMPP addresses carry none)', async () => {
    await waitFor('SMSC bound', async () => (await smsc.mo({ from: '447400000000', to: 'NOBODY', text: 'hi' })).length > 0);
    await db.query(`INSERT INTO senders (project_id, channel, alias, name, status) VALUES ($1, 'sms', '+447700900123', 'Long code', 'active'), ($1, 'sms', '447700900124', 'Other long code', 'active')`, [t.project.id]);
    for (const [i, to] of ['447700900123', '+447700900124'].entries()) {
      const { userId } = await memberContact(`+44740012362${i}`);
      expect(await smsc.mo({ from: `44740012362${i}`, to, text: 'STOP' })).toEqual([0]);
      expect([to, await messagingConsent(userId)]).toEqual([to, 'opt-out']);
    }
  });

  it("the rest of the carrier-standard set opts out too, beside the keywords a new project stores (ADR 0183 amended)", async () => {
    const [{ optOut }] = await db.query(`SELECT general_config #> '{channelSms,optOutKeywords}' AS "optOut" FROM projects WHERE id = $1`, [t.project.id]);
    expect(optOut).toEqual(['STOP', 'UNSUBSCRIBE']);
    await waitFor('SMSC bound', async () => (await smsc.mo({ from: '447400000000', to: 'NOBODY', text: 'hi' })).length > 0);
    for (const [i, text] of ['STOPALL', 'cancel', 'End.', 'Quit!'].entries()) {
      const phone = `+44740012361${i}`;
      const { userId } = await memberContact(phone);
      expect(await smsc.mo({ from: phone.slice(1), to: 'MELD', text })).toEqual([0]);
      expect([text, await messagingConsent(userId)]).toEqual([text, 'opt-out']);
    }
  });

  describe('a number no contact has (ADR 0343)', () => {
    const setChannelSms = (settings: Record<string, boolean>) =>
      db.query(`UPDATE projects SET general_config = jsonb_set(COALESCE(general_config, '{}'), '{channelSms}', COALESCE(general_config->'channelSms', '{}') || $2::jsonb) WHERE id = $1`, [t.project.id, JSON.stringify(settings)]);
    /** Our own contacts of the number (the messaging data source's, keyed by it), as written. */
    const ownContacts = async (e164: string): Promise<Json[]> =>
      (await db.query(`SELECT s.attributes FROM source_contacts s JOIN data_sources d ON d.id = s.data_source_id AND d.uid = 'meld-messaging' WHERE s.project_id = $1 AND s.user_id = $2`, [t.project.id, e164])).map((r: Json) => r.attributes);
    const messagesTo = async (e164: string) => (await db.query(`SELECT count(*)::int AS n FROM sms_messages WHERE project_id = $1 AND destination = $2`, [t.project.id, e164]))[0].n;
    const expectRefused = async (e164: string) => {
      const before = smsc.stats().submitted;
      for (const outbound of [false, true]) {
        await setChannelSms({ autoCreateContactsOnOutbounds: outbound });
        const { status, body } = await send(e164, 'Your parcel is on its way');
        expect([outbound, status, body.details?.reason]).toEqual([outbound, 422, 'opted_out']);
      }
      expect(await messagesTo(e164)).toBe(0);
      expect(smsc.stats().submitted).toBe(before);
    };

    beforeAll(async () => {
      await waitFor('SMSC bound', async () => (await smsc.mo({ from: '447400000000', to: 'NOBODY', text: 'hi' })).length > 0);
    });
    afterEach(() => db.query(`UPDATE projects SET general_config = general_config #- '{channelSms,autoCreateContactsOnInbounds}' #- '{channelSms,autoCreateContactsOnOutbounds}' WHERE id = $1`, [t.project.id]));

    it('autoCreateContactsOnInbounds false: other texts and START create nothing; STOP creates the contact opted out, every send is refused; START lets it through', async () => {
      const phone = '+447400123700';
      await setChannelSms({ autoCreateContactsOnInbounds: false });
      expect(await smsc.mo({ from: '447400123700', to: 'MELD', text: 'hello, who is this?' })).toEqual([0]);
      expect(await smsc.mo({ from: '447400123700', to: 'MELD', text: 'START' })).toEqual([0]);
      expect(await ownContacts(phone)).toEqual([]);

      expect(await smsc.mo({ from: '447400123700', to: 'MELD', text: 'STOP' })).toEqual([0]);
      expect(await ownContacts(phone)).toEqual([{ _phone_mobile: phone, _consent_sms: 'opt-out' }]);
      // Refused from the STOP's commit on, before identity-merge (not running here) merged the contact.
      await expectRefused(phone);
      expect(await ownContacts(phone)).toEqual([{ _phone_mobile: phone, _consent_sms: 'opt-out' }]);

      expect(await smsc.mo({ from: '+447400123700', to: 'MELD', text: 'start' })).toEqual([0]);
      expect(await ownContacts(phone)).toEqual([{ _phone_mobile: phone, _consent_sms: 'opt-in' }]);
      await setChannelSms({ autoCreateContactsOnOutbounds: true });
      const sent = await send(phone, 'Welcome back');
      expect([sent.status, sent.body.metadata]).toEqual([201, { autoCreated: true }]);
      expect(await ownContacts(phone)).toHaveLength(1);
    });

    it('autoCreateContactsOnInbounds true: any text creates the contact, STOP opts it out, every send is refused; START lets it through', async () => {
      const phone = '+447400123701';
      await setChannelSms({ autoCreateContactsOnInbounds: true });
      expect(await smsc.mo({ from: '447400123701', to: 'MELD', text: 'hello' })).toEqual([0]);
      expect(await ownContacts(phone)).toEqual([{ _phone_mobile: phone }]);
      expect(await smsc.mo({ from: '447400123701', to: 'MELD', text: 'Stop!' })).toEqual([0]);
      expect(await ownContacts(phone)).toEqual([{ _phone_mobile: phone, _consent_sms: 'opt-out' }]);
      await expectRefused(phone);

      await setChannelSms({ autoCreateContactsOnInbounds: true, autoCreateContactsOnOutbounds: true });
      expect(await smsc.mo({ from: '447400123701', to: 'MELD', text: 'Start.' })).toEqual([0]);
      expect(await ownContacts(phone)).toEqual([{ _phone_mobile: phone, _consent_sms: 'opt-in' }]);
      expect((await send(phone, 'Welcome back')).status).toBe(201);

      // A STOP straight away from a new number: created opted out as well.
      expect(await smsc.mo({ from: '447400123702', to: 'MELD', text: 'UNSUBSCRIBE' })).toEqual([0]);
      expect(await ownContacts('+447400123702')).toEqual([{ _phone_mobile: '+447400123702', _consent_sms: 'opt-out' }]);
      await expectRefused('+447400123702');
    });

    it('a STOP after a START stamped ahead (a replica whose clock was fast) still opts the number out (ADR 0349)', async () => {
      const phone = '+447400123704';
      await setChannelSms({ autoCreateContactsOnInbounds: true });
      expect(await smsc.mo({ from: '447400123704', to: 'MELD', text: 'START' })).toEqual([0]);
      expect(await ownContacts(phone)).toEqual([{ _phone_mobile: phone, _consent_sms: 'opt-in' }]);
      // As a replica an hour ahead would have left the START.
      await db.query(
        `UPDATE source_contacts SET attribute_at = jsonb_set(attribute_at, '{_consent_sms}', to_jsonb(to_char((now() + interval '1 hour') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
          WHERE project_id = $1 AND user_id = $2`,
        [t.project.id, phone],
      );
      expect(await smsc.mo({ from: '447400123704', to: 'MELD', text: 'STOP' })).toEqual([0]);
      expect(await ownContacts(phone)).toEqual([{ _phone_mobile: phone, _consent_sms: 'opt-out' }]);
      await expectRefused(phone);
    });

    it('once merged, a later contact of the number kept apart (the project merges on _user_id) does not make a send by phone go out', async () => {
      const phone = '+447400123703';
      expect(await smsc.mo({ from: '447400123703', to: 'MELD', text: 'STOP' })).toEqual([0]);
      // As identity-merge leaves it: the number's contact opted out, and a CRM contact with the same mobile written later.
      const [{ id: messagingSource }] = await db.query(`SELECT id FROM data_sources WHERE project_id = $1 AND uid = 'meld-messaging'`, [t.project.id]);
      const merged = await seedContact(db, t.project.id, { _user_id: phone, _phone_mobile: phone, _consent_sms: 'opt-out' });
      await db.query(`INSERT INTO audience_members (project_id, data_source_id, user_id, audience_id) VALUES ($1, $2, $3, $4)`, [t.project.id, messagingSource, phone, merged]);
      await memberContact(phone);
      await expectRefused(phone);
      const byId = await send(merged, 'hello');
      expect([byId.status, byId.body.details?.reason]).toEqual([422, 'opted_out']);
    });

    it("the unsubscribe link of a message whose contact was deleted since opts its number out, on our own contact of it", async () => {
      const phone = '+447400123705';
      const { audienceId } = await memberContact(phone);
      const { body } = await send(audienceId, 'Stop: {{unsubscribe}}');
      const [{ code }] = await db.query(`SELECT code FROM sms_links WHERE sms_id = $1 AND kind = 'unsubscribe'`, [body.entity.id]);
      // As identity-merge leaves a contact deleted through ingest: no member, no audience contact.
      await db.query(`DELETE FROM audience_members WHERE project_id = $1 AND audience_id = $2`, [t.project.id, audienceId]);
      await db.query(`DELETE FROM audience_contacts WHERE project_id = $1 AND id = $2`, [t.project.id, audienceId]);
      const done = await fetch(`${base}/u/${code}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
      expect([done.status, await done.text()]).toEqual([200, expect.stringContaining('You are unsubscribed')]);
      expect(await ownContacts(phone)).toEqual([{ _phone_mobile: phone, _consent_sms: 'opt-out' }]);
      for (const outbound of [false, true]) {
        await setChannelSms({ autoCreateContactsOnOutbounds: outbound });
        const again = await send(phone, 'Your parcel is on its way');
        expect([outbound, again.status, again.body.details?.reason]).toEqual([outbound, 422, 'opted_out']);
      }
      expect(await messagesTo(phone)).toBe(1);
    });

    it('a sender address that is not a valid international number is answered and ignored, whatever the settings', async () => {
      await setChannelSms({ autoCreateContactsOnInbounds: true });
      const count = async () => (await db.query(`SELECT count(*)::int AS n FROM source_contacts WHERE project_id = $1`, [t.project.id]))[0].n;
      const before = await count();
      for (const from of ['ACME', '', '+1', '+', '4474001237049999', '4474; DROP TABLE x']) {
        expect(await smsc.mo({ from, to: 'MELD', text: 'STOP' })).toEqual([0]);
      }
      expect(await count()).toBe(before);
    });
  });
});

