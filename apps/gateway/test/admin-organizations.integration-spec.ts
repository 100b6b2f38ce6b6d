import { OrganizationSchema } from '@meld/api';
import { type AdminGateway, startAdminGateway, unique } from './admin-support/admin-gateway';
import { UNKNOWN_ID, createOrganization, fieldsOf } from './admin-support/fixtures';

describe('admin: organizations', () => {
  let gw: AdminGateway;
  beforeAll(async () => (gw = await startAdminGateway()));
  afterAll(() => gw?.close());

  it('creates an organization with defaults (201, entity)', async () => {
    const name = unique('Acme');
    const res = await gw.call('POST', '/organizations', { name, plan: 'm' });
    expect(res.status).toBe(201);
    expect(OrganizationSchema.strict().parse(res.body.entity)).toMatchObject({ name, plan: 'm', apiTier: 'standard', funds: 0, prepaid: false, dataMode: 'normal' });
    expect(res.body.entity.createdAt).toMatch(/\+00:00$/);
  });

  it('takes the optional fields', async () => {
    const res = await gw.call('POST', '/organizations', { name: unique('Prepaid'), plan: 'xl', funds: 12.5, prepaid: true, dataMode: 'anonymized', apiTier: 'partner' });
    expect(res.status).toBe(201);
    expect(res.body.entity).toMatchObject({ plan: 'xl', funds: 12.5, prepaid: true, dataMode: 'anonymized', apiTier: 'partner' });
  });

  it('refuses a bad body with a 400 naming each field, unknown fields included', async () => {
    const res = await gw.call('POST', '/organizations', { name: '', plan: 'xxl', funds: 'lots', colour: 'red' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request', message: expect.stringContaining('colour: unknown field') });
    expect(fieldsOf(res.body).map(([path]) => path).sort()).toEqual(['colour', 'funds', 'name', 'plan']);
    expect((await gw.call('POST', '/organizations', '{"name": ')).status).toBe(400);
    expect((await gw.call('POST', '/organizations')).status).toBe(400);
  });

  it('reads an organization with its projects; 404 for an unknown or malformed id', async () => {
    const id = await createOrganization(gw);
    await gw.call('POST', `/organizations/${id}/projects`, { name: 'One', uid: unique('one') });
    const res = await gw.call('GET', `/organizations/${id}`);
    expect(res.status).toBe(200);
    expect(res.body.entity.id).toBe(id);
    expect(res.body.metadata.projects).toEqual([expect.objectContaining({ name: 'One' })]);
    for (const bad of [UNKNOWN_ID, 'not-a-uuid']) {
      const missing = await gw.call('GET', `/organizations/${bad}`);
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ statusCode: 404, error: 'Not Found', message: `organization "${bad}" not found` });
    }
  });

  it('changes plan and funds (PATCH); 400 and 404 as usual', async () => {
    const id = await createOrganization(gw);
    const res = await gw.call('PATCH', `/organizations/${id}`, { plan: 'l', funds: 100 });
    expect(res.status).toBe(200);
    expect(res.body.entity).toMatchObject({ plan: 'l', funds: 100 });
    expect(fieldsOf((await gw.call('PATCH', `/organizations/${id}`, { plan: 'q' })).body)).toEqual([['plan', expect.any(String)]]);
    expect((await gw.call('PATCH', `/organizations/${UNKNOWN_ID}`, { plan: 'm' })).status).toBe(404);
  });

  it('funds the numeric(14,4) column would round are a 400 naming them, not a prepaid organization left at 0', async () => {
    const tiny = await gw.call('POST', '/organizations', { name: unique('Tiny'), plan: 'm', prepaid: true, funds: 0.00004 });
    expect([tiny.status, fieldsOf(tiny.body)]).toEqual([400, [['funds', 'must have at most 4 decimal places']]]);
    const id = await createOrganization(gw);
    expect(fieldsOf((await gw.call('PATCH', `/organizations/${id}`, { funds: 12.34567 })).body)).toEqual([['funds', 'must have at most 4 decimal places']]);
    expect(fieldsOf((await gw.call('PATCH', `/organizations/${id}`, { funds: 1e9 + 1 })).body).map(([path]) => path)).toEqual(['funds']);
    const smallest = await gw.call('PATCH', `/organizations/${id}`, { funds: 0.0001, prepaid: true });
    expect([smallest.status, smallest.body.entity.funds]).toEqual([200, 0.0001]);
  });
});
