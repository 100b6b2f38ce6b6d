import { waitFor } from '@meld/testing';
import { type SmsProject, seedSmsProject, smsStack, unsubscribeLink } from './support/sms-stack';

// SMS consent end to end (issue 17, ADRs 0181-0184): gateway, ingest, identity-merge, messaging
// and audience as processes with an SMSC simulator (the shared e2e system, ADR 0352). Each way of opting
// out (the unsubscribe link, an inbound STOP, a data source's `_consent_sms`) must make the
// next send a 422 `opted_out` once identity-merge applied it; outbound auto-creation puts an
// unknown number in the audience only when the project allows it; a STOP from an unknown number
// is kept (ADR 0343).
describe('SMS opt-out and auto-created contacts through the gateway', () => {
  let sms: Awaited<ReturnType<typeof smsStack>>;
  let p: SmsProject;

  beforeAll(async () => {
    sms = await smsStack();
    p = await seedSmsProject(sms.base);
  }, 240000);

  const expectOptedOut = async (target: string, project = p) => {
    const refused = await project.send(target, 'Your parcel is on its way');
    expect([refused.status, refused.body.details?.reason]).toEqual([422, 'opted_out']);
  };

  it('the unsubscribe link: the page asks, only the confirming POST opts out; the next send is 422 opted_out', async () => {
    const phone = '+447400555101';
    const id = await p.contact('optout-link', phone);
    const sent = await p.send(id, 'Sale today. Stop: {{unsubscribe}}');
    expect([sent.status, sent.body.entity?.audienceId]).toEqual([201, id]);
    const link = await unsubscribeLink(p, sent.body.entity.id);
    expect(link.startsWith(`${sms.base}/u/`)).toBe(true);

    const page = await fetch(link);
    const html = await page.text();
    expect([page.status, html]).toEqual([200, expect.stringContaining('Stop SMS from Corner Shop?')]);
    expect((await p.searchPhone(phone)).body.entity._consent_sms).toBeUndefined();

    const done = await fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
    expect([done.status, await done.text()]).toEqual([200, expect.stringContaining('You are unsubscribed')]);
    await p.consentBecomes(phone, 'opt-out');
    await expectOptedOut(id);
    await expectOptedOut(phone);
  }, 90000);

  it('an inbound STOP to the sender opts the number out (next send 422); START lifts it (next send 201)', async () => {
    const phone = '+447400555102';
    const id = await p.contact('optout-stop', phone);
    expect((await p.send(id, 'Welcome')).status).toBe(201);
    // /healthz does not wait for the SMPP bind; a text to no sender changes nothing.
    await waitFor('messaging bound to the SMSC', async () => (await sms.mo({ from: '+447400555199', to: 'NOBODY', text: 'hi' })).length > 0, { timeoutMs: 30000 });
    // The simulator answers a deliver_sm only after messaging recorded the consent (ADR 0183).
    expect(await sms.mo({ from: phone, to: p.alias, text: 'STOP' })).toEqual([0]);
    await p.consentBecomes(phone, 'opt-out');
    await expectOptedOut(id);

    expect(await sms.mo({ from: phone, to: p.alias, text: 'start' })).toEqual([0]);
    await p.consentBecomes(phone, 'opt-in');
    expect((await p.send(id, 'Welcome back')).status).toBe(201);
  }, 90000);

  it('`_consent_sms: opt-out` written to a data source makes the next send 422 opted_out', async () => {
    const phone = '+447400555103';
    const id = await p.contact('optout-ingest', phone);
    expect((await p.send(id, 'Hello')).status).toBe(201);
    expect((await p.ingest([{ _user_id: 'optout-ingest', _consent_sms: 'opt-out' }])).status).toBe(202);
    await p.consentBecomes(phone, 'opt-out');
    await expectOptedOut(id);
  }, 90000);

  it('a contact whose `_user_id` is junk (ADR 0024) opts out by the link: its contact is opt-out and 422, not another data source\'s contact of the same junk id', async () => {
    const [phone, otherPhone] = ['+447400555111', '+447400555112'];
    const id = await p.contact('unknown', phone);
    // Another data source with the same junk `_user_id`: a person of its own (junk merges nobody).
    const shop = await p.admin('POST', `/projects/${p.uid}/datasources`, { name: 'Shop' });
    const written = await fetch(`${sms.base}/v1/project/${p.uid}/datasource/${shop.entity.id}/stream/contacts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${shop.metadata!.token!}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ _user_id: 'unknown', _phone_mobile: otherPhone }]),
    });
    expect(written.status).toBe(202);
    await waitFor('the shop contact in the audience', async () => (await p.searchPhone(otherPhone)).status === 200, { timeoutMs: 30000 });
    const other = (await p.searchPhone(otherPhone)).body.entity.id;
    expect(other).not.toBe(id);

    const sent = await p.send(id, 'Sale today. Stop: {{unsubscribe}}');
    expect(sent.status).toBe(201);
    const done = await fetch(await unsubscribeLink(p, sent.body.entity.id), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
    expect(done.status).toBe(200);
    await p.consentBecomes(phone, 'opt-out');
    await expectOptedOut(id);
    expect((await p.searchPhone(otherPhone)).body.entity._consent_sms).toBeUndefined();
    expect((await p.send(other, 'Hello')).status).toBe(201);
  }, 90000);

  it('a STOP from the number of a contact whose `_user_id` is junk, in a project merging on the mobile: that contact is opt-out and 422, another junk-id contact is not', async () => {
    const q = await seedSmsProject(sms.base);
    await q.admin('PATCH', `/projects/${q.uid}`, { mergingAttributes: ['_phone_mobile'] });
    const [phone, otherPhone] = ['+447400555113', '+447400555114'];
    const id = await q.contact('unknown', phone);
    const other = await q.contact('0', otherPhone);
    await waitFor('messaging bound to the SMSC', async () => (await sms.mo({ from: '+447400555199', to: 'NOBODY', text: 'hi' })).length > 0, { timeoutMs: 30000 });
    expect(await sms.mo({ from: phone, to: q.alias, text: 'STOP' })).toEqual([0]);
    await q.consentBecomes(phone, 'opt-out');
    await expectOptedOut(id, q);
    expect((await q.searchPhone(otherPhone)).body.entity._consent_sms).toBeUndefined();
    expect((await q.send(other, 'Hello')).status).toBe(201);
  }, 90000);

  it('an operator\'s suppression of the number of a contact whose `_user_id` is junk reaches that contact (ADR 0361); lifted, it is gone again', async () => {
    const phone = '+447400555115';
    await p.contact('none', phone);
    await p.admin('PUT', `/projects/${p.uid}/suppressions/sms/${encodeURIComponent(phone)}`);
    await waitFor('the contact suppressed', async () => (await p.searchPhone(phone)).body?.entity?._suppressed_sms === true, { timeoutMs: 30000 });
    await p.admin('DELETE', `/projects/${p.uid}/suppressions/sms/${encodeURIComponent(phone)}`);
    await waitFor('the suppression lifted', async () => (await p.searchPhone(phone)).body?.entity?._suppressed_sms === undefined, { timeoutMs: 30000 });
  }, 90000);

  it('autoCreateContactsOnOutbounds: a send to an unknown number creates the contact when true, 404 when false', async () => {
    const [before, created, after] = ['+447400555104', '+447400555105', '+447400555106'];
    const unknown = await p.send(before, 'Hello');
    expect([unknown.status, unknown.body.message]).toEqual([404, 'no audience contact with this phone']);

    await p.admin('PATCH', `/projects/${p.uid}`, { generalConfig: { channelSms: { autoCreateContactsOnOutbounds: true } } });
    const sent = await p.send(created, 'Hello');
    expect([sent.status, sent.body.metadata]).toEqual([201, { autoCreated: true }]);
    // The send waited up to 3 s for the merge (ADR 0184): a slower merge leaves the message without an audience id, the contact comes later.
    let found = await p.searchPhone(created);
    await waitFor('the auto-created contact in the audience', async () => (found = await p.searchPhone(created)).status === 200, { timeoutMs: 30000 });
    expect(found.body.entity._phone_mobile).toBe(created);
    if (sent.body.entity.audienceId !== null) expect(found.body.entity.id).toBe(sent.body.entity.audienceId);

    await p.admin('PATCH', `/projects/${p.uid}`, { generalConfig: { channelSms: { autoCreateContactsOnOutbounds: false } } });
    expect((await p.send(after, 'Hello')).status).toBe(404);
    expect((await p.searchPhone(after)).status).toBe(404);
  }, 90000);

  it('an inbound STOP from a number no contact has (ADR 0343): the contact is created opted out, the next send by phone or to a CRM contact merged by phone is 422; START lets both through', async () => {
    // A project of its own: it merges on the mobile, and auto-creates on outbound sends (the STOP must win over that too).
    const q = await seedSmsProject(sms.base);
    await q.admin('PATCH', `/projects/${q.uid}`, { mergingAttributes: ['_phone_mobile'], generalConfig: { channelSms: { autoCreateContactsOnOutbounds: true } } });
    const [phone, other] = ['+447400555107', '+447400555108'];
    await waitFor('messaging bound to the SMSC', async () => (await sms.mo({ from: '+447400555199', to: 'NOBODY', text: 'hi' })).length > 0, { timeoutMs: 30000 });
    // autoCreateContactsOnInbounds false (the default): a text from an unknown number creates nothing, a STOP does.
    expect(await sms.mo({ from: other, to: q.alias, text: 'hello?' })).toEqual([0]);
    expect(await sms.mo({ from: phone, to: q.alias, text: 'STOP' })).toEqual([0]);
    await expectOptedOut(phone, q);
    await q.consentBecomes(phone, 'opt-out');
    await expectOptedOut(phone, q);
    expect((await q.searchPhone(other)).status).toBe(404);

    // The CRM writes a contact with that mobile later: merged by phone, the opt-out wins (ADR 0048).
    expect((await q.ingest([{ _user_id: 'crm-555107', _phone_mobile: phone, _first_name: 'Ada' }])).status).toBe(202);
    let merged = await q.searchPhone(phone);
    await waitFor('the CRM contact merged with the number', async () => (merged = await q.searchPhone(phone)).body?.entity?._first_name === 'Ada', { timeoutMs: 30000 });
    expect(merged.body.entity._consent_sms).toBe('opt-out');
    await expectOptedOut(merged.body.entity.id, q);
    await expectOptedOut(phone, q);

    expect(await sms.mo({ from: phone, to: q.alias, text: 'START' })).toEqual([0]);
    await q.consentBecomes(phone, 'opt-in');
    expect((await q.send(merged.body.entity.id, 'Welcome back')).status).toBe(201);
    expect((await q.send(phone, 'Welcome back')).status).toBe(201);
  }, 90000);
});
