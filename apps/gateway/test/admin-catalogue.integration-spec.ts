import { UserEntity, DATA_SOURCE } from '@meld/db';
import { verifyPassword } from '@meld/auth';
import type { DataSource } from 'typeorm';
import { type AdminGateway, startAdminGateway, unique } from './admin-support/admin-gateway';
import { UNKNOWN_ID, createOrganization, createProject, fieldsOf } from './admin-support/fixtures';

describe('admin: catalogue, senders, webhooks, users', () => {
  let gw: AdminGateway;
  let org: string;
  let project: { id: string; uid: string };
  beforeAll(async () => {
    gw = await startAdminGateway();
    org = await createOrganization(gw);
    project = await createProject(gw, org);
  });
  afterAll(() => gw?.close());

  it('declares an event type with retention and parameters (201); 409 on a second declaration', async () => {
    const body = {
      uid: 'purchase',
      name: 'Purchase',
      category: 'ecommerce',
      attribution: true,
      retentionDays: 90,
      parameters: [
        { parameter: 'product-id', title: 'Product id', dataType: 'string', required: true, maxLength: 64 },
        { parameter: 'amount', title: 'Amount', dataType: 'number' },
        { parameter: 'tags', title: 'Tags', dataType: 'string', multiValue: 10 },
      ],
    };
    const res = await gw.call('POST', `/projects/${project.uid}/event-types`, body);
    expect(res.status).toBe(201);
    expect(res.body.entity).toEqual({
      uid: 'purchase',
      name: 'Purchase',
      category: 'ecommerce',
      attribution: true,
      automation: false,
      important: false,
      retentionDays: 90,
      parameters: expect.arrayContaining([
        { parameter: 'product-id', title: 'Product id', dataType: 'string', required: true, multiValue: 1, maxLength: 64 },
        { parameter: 'amount', title: 'Amount', dataType: 'number', required: false, multiValue: 1, maxLength: null },
        { parameter: 'tags', title: 'Tags', dataType: 'string', required: false, multiValue: 10, maxLength: null },
      ]),
    });
    const dup = await gw.call('POST', `/projects/${project.uid}/event-types`, body);
    expect(dup.status).toBe(409);
    expect(dup.body.message).toBe(`event type "purchase" already exists in project "${project.uid}"`);
  });

  it('refuses bad event types with a 400 naming the field; 404 for an unknown project', async () => {
    const base = { uid: unique('e').replace(/-/g, '_'), name: 'E', category: 'crm' };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, category: 'sports' }, 'category'],
      [{ ...base, uid: 'has.dot' }, 'uid'],
      [{ ...base, retentionDays: 0 }, 'retentionDays'],
      [{ ...base, parameters: [{ parameter: 'n', title: 'N', dataType: 'number', maxLength: 3 }] }, 'parameters[0].maxLength'],
      [{ ...base, parameters: [{ parameter: 'a', title: 'A', dataType: 'string' }, { parameter: 'a', title: 'A', dataType: 'string' }] }, 'parameters[1].parameter'],
      [{ ...base, parameters: [{ parameter: 'a', title: 'A', dataType: 'blob' }] }, 'parameters[0].dataType'],
    ];
    for (const [body, path] of cases) {
      const res = await gw.call('POST', `/projects/${project.uid}/event-types`, body);
      expect([path, res.status, fieldsOf(res.body).map(([p]) => p)]).toEqual([path, 400, [path]]);
    }
    expect((await gw.call('POST', `/projects/${unique('nope')}/event-types`, base)).status).toBe(404);
  });

  it('adds custom attributes (201); refuses reserved names, unique multivalue, duplicates (409)', async () => {
    const res = await gw.call('POST', `/projects/${project.uid}/attributes`, { uid: 'loyalty_tier', label: 'Loyalty tier', type: 'string' });
    expect(res.status).toBe(201);
    expect(res.body.entity).toEqual({ uid: 'loyalty_tier', label: 'Loyalty tier', type: 'string', multivalue: false, enabled: true, visible: true, internal: false, unique: false, reserved: false });
    expect((await gw.call('POST', `/projects/${project.uid}/attributes`, { uid: 'loyalty_tier', label: 'Again', type: 'string' })).status).toBe(409);
    expect((await gw.call('POST', `/projects/${project.uid}/attributes`, { uid: '_email', label: 'Email', type: 'email' })).status).toBe(400);
    expect(fieldsOf((await gw.call('POST', `/projects/${project.uid}/attributes`, { uid: 'codes', label: 'Codes', type: 'string', unique: true, multivalue: true })).body)).toEqual([
      ['unique', 'a unique attribute cannot be multivalue'],
    ]);
    expect(fieldsOf((await gw.call('POST', `/projects/${project.uid}/attributes`, { uid: 'x', label: 'X', type: 'colour' })).body)).toEqual([['type', expect.any(String)]]);
    expect((await gw.call('POST', `/projects/${unique('nope')}/attributes`, { uid: 'x', label: 'X', type: 'string' })).status).toBe(404);
  });

  it('accepts as uids the names ingest creates (ADR 0035), typed as date, email or phone; refuses reserved, empty, long or spaced ones', async () => {
    for (const [uid, type] of [['signupDate', 'date'], ['utm.source', 'string'], ['Plan-Tier', 'string'], ['9lives', 'phone'], ['work_Email', 'email']]) {
      const res = await gw.call('POST', `/projects/${project.uid}/attributes`, { uid, label: uid, type });
      expect([uid, res.status, res.body.entity?.uid, res.body.entity?.type]).toEqual([uid, 201, uid, type]);
    }
    for (const uid of ['_x', '', 'a'.repeat(65), 'signup date', '.dot', '-dash', 'café']) {
      const res = await gw.call('POST', `/projects/${project.uid}/attributes`, { uid, label: 'X', type: 'string' });
      expect([uid, res.status, fieldsOf(res.body).map(([p]) => p)]).toEqual([uid, 400, ['uid']]);
    }
    expect((await gw.call('POST', `/projects/${project.uid}/attributes`, { uid: 'a'.repeat(64), label: 'X', type: 'string' })).status).toBe(201);
  });

  it('adds a sender with per-country statuses', async () => {
    const res = await gw.call('POST', `/projects/${project.uid}/senders`, {
      channel: 'sms',
      alias: 'ACME',
      name: 'Acme alerts',
      status: 'active',
      countries: [
        { country: 'FR', accepted: true, effectiveStatus: 'active', price: 0.045 },
        { country: 'DE', accepted: true, effectiveStatus: 'pending', price: 0.07 },
        { country: 'US', accepted: false, effectiveStatus: 'blocked', price: 0.01 },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.entity).toMatchObject({ channel: 'sms', alias: 'ACME', status: 'active', acceptedCountries: ['DE', 'FR'] });
    expect(res.body.entity.countries).toEqual([
      { country: 'DE', accepted: true, effectiveStatus: 'pending', price: 0.07 },
      { country: 'FR', accepted: true, effectiveStatus: 'active', price: 0.045 },
      { country: 'US', accepted: false, effectiveStatus: 'blocked', price: 0.01 },
    ]);
    const bad = await gw.call('POST', `/projects/${project.uid}/senders`, { channel: 'fax', alias: 'A', name: 'A', status: 'active', countries: [{ country: 'fr' }, { country: 'DE', price: -1 }] });
    expect(fieldsOf(bad.body).map(([p]) => p).sort()).toEqual(['channel', 'countries[0].country', 'countries[1].price']);
    // A code no phone number has is refused: a destination's country never matches it, so the sender would never send.
    const nowhere = await gw.call('POST', `/projects/${project.uid}/senders`, { channel: 'sms', alias: 'A', name: 'A', status: 'active', countries: [{ country: 'GB' }, { country: 'UK' }, { country: 'XX' }] });
    expect(fieldsOf(nowhere.body)).toEqual([
      ['countries[1].country', '"UK" is not a country code phone numbers belong to (ISO 3166-1 alpha-2, e.g. GB not UK)'],
      ['countries[2].country', '"XX" is not a country code phone numbers belong to (ISO 3166-1 alpha-2, e.g. GB not UK)'],
    ]);
    const updated = await gw.call('PATCH', `/projects/${project.uid}/senders/${res.body.entity.id}`, { countries: [{ country: 'UK' }] });
    expect([updated.status, fieldsOf(updated.body).map(([p]) => p)]).toEqual([400, ['countries[0].country']]);
    expect((await gw.call('POST', `/projects/${unique('nope')}/senders`, { channel: 'sms', alias: 'A', name: 'A', status: 'active' })).status).toBe(404);
  });

  it('a price the numeric(10,5) column cannot hold as given is a 400 naming it, never a 500 or a silent 0', async () => {
    const countries = [{ country: 'FR', price: 100000 }, { country: 'DE', price: 99999.999999 }, { country: 'GB', price: 0.000001 }, { country: 'BE', price: 99999.99999 }, { country: 'NL', price: 0.00001 }];
    const bad = await gw.call('POST', `/projects/${project.uid}/senders`, { channel: 'sms', alias: 'PRICE', name: 'Price', status: 'active', countries });
    expect([bad.status, [...new Set(fieldsOf(bad.body).map(([p]) => p))]]).toEqual([400, ['countries[0].price', 'countries[1].price', 'countries[2].price']]);
    expect(fieldsOf(bad.body)).toEqual(expect.arrayContaining([['countries[0].price', expect.stringContaining('99999.99999')], ['countries[2].price', 'must have at most 5 decimal places']]));
    const ok = await gw.call('POST', `/projects/${project.uid}/senders`, { channel: 'sms', alias: 'PRICE', name: 'Price', status: 'active', countries: countries.slice(3) });
    expect([ok.status, ok.body.entity.countries.map((c: { price: number }) => c.price)]).toEqual([201, [99999.99999, 0.00001]]);
    const patched = await gw.call('PATCH', `/projects/${project.uid}/senders/${ok.body.entity.id}`, { countries: [{ country: 'FR', price: 100000 }] });
    expect([patched.status, fieldsOf(patched.body).map(([p]) => p)]).toEqual([400, ['countries[0].price']]);
  });

  it('changes a sender: status, name, and a whole new country list, in one transaction', async () => {
    const created = await gw.call('POST', `/projects/${project.uid}/senders`, { channel: 'sms', alias: 'PATCHME', name: 'Patch me', status: 'active', countries: [{ country: 'FR', price: 0.04 }] });
    const id = created.body.entity.id;
    const paused = await gw.call('PATCH', `/projects/${project.uid}/senders/${id}`, { status: 'inactive' });
    expect(paused.status).toBe(200);
    expect(paused.body.entity).toMatchObject({ id, alias: 'PATCHME', name: 'Patch me', status: 'inactive', acceptedCountries: ['FR'] });
    const moved = await gw.call('PATCH', `/projects/${project.uid}/senders/${id}`, { name: 'Moved', countries: [{ country: 'GB', price: 0.03 }, { country: 'BE', accepted: false, effectiveStatus: 'blocked' }] });
    expect(moved.body.entity).toMatchObject({ name: 'Moved', status: 'inactive', acceptedCountries: ['GB'] });
    expect(moved.body.entity.countries).toEqual([
      { country: 'BE', accepted: false, effectiveStatus: 'blocked', price: 0 },
      { country: 'GB', accepted: true, effectiveStatus: 'active', price: 0.03 },
    ]);
    const bad = await gw.call('PATCH', `/projects/${project.uid}/senders/${id}`, { status: 'paused', countries: [{ country: 'FR' }, { country: 'FR' }], channel: 'rcs' });
    expect(fieldsOf(bad.body).map(([p]) => p).sort()).toEqual(['channel', 'countries[1].country', 'status']);
    expect((await gw.call('PATCH', `/projects/${project.uid}/senders/not-a-uuid`, { status: 'active' })).status).toBe(404);
    expect((await gw.call('PATCH', `/projects/${project.uid}/senders/00000000-0000-4000-8000-000000000000`, { status: 'active' })).body.message).toBe('sender "00000000-0000-4000-8000-000000000000" not found');
    expect((await gw.call('PATCH', `/projects/${unique('nope')}/senders/${id}`, { status: 'active' })).status).toBe(404);
  });

  it('sets the SMS status webhook: a generated secret shown once, kept on later updates', async () => {
    const first = await gw.call('PUT', `/organizations/${org}/webhooks/sms-status`, { url: 'https://hooks.example.com/sms' });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ entity: { id: expect.any(String), kind: 'sms-status', url: 'https://hooks.example.com/sms', createdAt: expect.any(String) }, metadata: { secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+={0,2}$/) } });
    // A Standard Webhooks secret as the library reads it: a 24-byte key (ADR 0155).
    expect(Buffer.from(first.body.metadata.secret.slice(6), 'base64')).toHaveLength(24);
    const second = await gw.call('PUT', `/organizations/${org}/webhooks/sms-status`, { url: 'https://hooks.example.com/v2' });
    expect(second.body).toMatchObject({ entity: { id: first.body.entity.id, url: 'https://hooks.example.com/v2' }, metadata: {} });
    const given = await gw.call('PUT', `/organizations/${org}/webhooks/sms-status`, { url: 'https://hooks.example.com/v3', secret: 'a-secret-of-sixteen+' });
    expect(given.body.metadata).toEqual({});
    expect(fieldsOf((await gw.call('PUT', `/organizations/${org}/webhooks/sms-status`, { url: 'ftp://x' })).body)).toEqual([['url', expect.any(String)]]);
    // standardwebhooks' format raw reads one byte per character: a secret beyond ASCII could not be verified with it.
    const unicode = await gw.call('PUT', `/organizations/${org}/webhooks/sms-status`, { url: 'https://hooks.example.com/v4', secret: 'pässwörd-0123456789' });
    expect([unicode.status, fieldsOf(unicode.body)]).toEqual([400, [['secret', 'must be printable ASCII characters']]]);
    expect((await gw.call('PUT', `/organizations/${UNKNOWN_ID}/webhooks/sms-status`, { url: 'https://x.example.com' })).status).toBe(404);
  });

  it('creates a dashboard user with a salted scrypt hash; 409 for a taken email, whatever its case', async () => {
    const email = `${unique('ops')}@example.com`;
    const res = await gw.call('POST', `/organizations/${org}/users`, { email, password: 'correct horse battery' });
    expect(res.status).toBe(201);
    expect(res.body.entity).toEqual({ id: expect.any(String), organizationId: org, email, createdAt: expect.any(String) });
    const stored = await gw.app.get<DataSource>(DATA_SOURCE).getRepository(UserEntity).findOneByOrFail({ id: res.body.entity.id });
    expect(stored.passwordHash).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(await verifyPassword('correct horse battery', stored.passwordHash)).toBe(true);
    expect(await verifyPassword('wrong', stored.passwordHash)).toBe(false);
    const dup = await gw.call('POST', `/organizations/${org}/users`, { email: email.toUpperCase(), password: 'another password' });
    expect(dup.status).toBe(409);
    expect(fieldsOf((await gw.call('POST', `/organizations/${org}/users`, { email: 'not-an-email', password: 'short' })).body).map(([p]) => p)).toEqual(['email', 'password']);
    expect((await gw.call('POST', `/organizations/${UNKNOWN_ID}/users`, { email: `${unique('x')}@example.com`, password: 'long enough' })).status).toBe(404);
  });
});
