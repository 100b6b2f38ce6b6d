import { randomUUID } from 'node:crypto';
import { ALL_SCOPES } from '@meld/contracts';
import { adminApi } from './support/admin-api';
import { SHARED_BASE, sharedSystem } from './support/shared-system';

// What a request's URL may hold, end to end (ADR 0012): the gateway takes a request line and
// headers up to 16 KiB and every app behind it takes whatever the gateway passed, although the
// signed principal repeats the path and query (ADR 0102); list queries at their documented
// limits (ADR 0055) get an answer, not a 431; errors of the URL itself are in the error shape;
// a body that is not JSON (a form, text) is refused on the JSON APIs, never read as one.
// On the shared e2e system: it needs no settings of its own (ADR 0352).
const BASE = SHARED_BASE;
const admin = adminApi(BASE);
const ERROR_KEYS = ['error', 'message', 'statusCode'];

describe('request line limits through the gateway', () => {
  let project: string;
  let token: string;
  let dataSource: { id: string; token: string };

  beforeAll(async () => {
    if (!process.env.MELD_ADMIN_TOKEN) throw new Error('MELD_ADMIN_TOKEN is not set (npm test sets it)');
    await sharedSystem();
    const org = (await admin('POST', '/organizations', { name: `request-line-${randomUUID().slice(0, 8)}`, plan: 'xl' })).entity.id;
    project = (await admin('POST', `/organizations/${org}/projects`, { name: 'Request line' })).entity.uid!;
    const created = await admin('POST', `/projects/${project}/datasources`, { name: 'Alpha' });
    dataSource = { id: created.entity.id, token: created.metadata!.token! };
    token = (await admin('POST', `/organizations/${org}/tokens`, { scopes: [...ALL_SCOPES], projects: [project] })).metadata!.token!;
  }, 240000);

  const get = async (path: string) => {
    const res = await fetch(`${BASE}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: (await res.json()) as { entity?: Array<{ name: string }>; statusCode?: number; message?: string } };
  };
  const cond = (i: number) => ({ field: 'name', operator: 'eq', value: i === 99 ? 'Alpha' : `no-such-source-${i}` });

  it('answers a `_q` of 100 conditions (the limit), ~10 KiB of query string, from the owning app', async () => {
    const q = encodeURIComponent(JSON.stringify({ filter: [{ field: '', operator: 'or', value: Array.from({ length: 100 }, (_, i) => cond(i)) }] }));
    expect(q.length).toBeGreaterThan(9 * 1024);
    const res = await get(`/v1/project/${project}/datasource?_q=${q}`);
    expect([res.status, res.body.entity?.map((d) => d.name)]).toEqual([200, ['Alpha']]);
  });

  it('answers a URL-form list of 100 values just under the gateway limit', async () => {
    const values = Array.from({ length: 99 }, (_, i) => `${'v'.repeat(145)}${i}`).concat('Alpha');
    const path = `/v1/project/${project}/datasource?name_in=${values.join('|')}`;
    expect(path.length).toBeGreaterThan(14 * 1024);
    const res = await get(path);
    expect([res.status, res.body.entity?.map((d) => d.name)]).toEqual([200, ['Alpha']]);
  });

  it('refuses a request line over 16 KiB at the gateway with 431 in the error shape', async () => {
    const res = await get(`/v1/project/${project}/datasource?name_eq=${'a'.repeat(17 * 1024)}`);
    expect(res.status).toBe(431);
    expect(Object.keys(res.body).sort()).toEqual(ERROR_KEYS);
  });

  it('refuses a path that is not valid percent-encoding with 400 in the error shape, without quoting the path', async () => {
    const res = await get(`/v1/project/${project}/audience/search/email/jane%zz@example.com`);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body).sort()).toEqual(ERROR_KEYS);
    expect(res.body.message).not.toContain('example.com');
  });

  it('answers a path parameter longer than any the API takes with 414, not "no such endpoint", and one at a real limit from the app', async () => {
    const long = await get(`/v1/project/${project}/audience/search/phone/${'1'.repeat(1100)}`);
    expect(long.status).toBe(414);
    expect(Object.keys(long.body).sort()).toEqual(ERROR_KEYS);
    expect(long.body.message).not.toContain('1111');
    const email = `${'a'.repeat(64)}@${'b'.repeat(185)}.com`;
    expect(email).toHaveLength(254);
    expect(await get(`/v1/project/${project}/audience/search/email/${encodeURIComponent(email)}`)).toMatchObject({ status: 404, body: { message: 'contact not found' } });
  });

  describe('a body that is not JSON on the JSON APIs', () => {
    const NOT_JSON = { statusCode: 400, error: 'Bad Request', message: 'the body must be JSON, sent with Content-Type: application/json' };
    const send = async (method: string, path: string, contentType: string, body: string, bearer = token) => {
      const res = await fetch(`${BASE}${path}`, { method, headers: { authorization: `Bearer ${bearer}`, 'content-type': contentType }, body });
      return { status: res.status, body: (await res.json()) as unknown };
    };

    it('refuses a form, which was read as an object (a segment renamed by `name=…`)', async () => {
      const segment = await send('POST', `/v1/project/${project}/segment`, 'application/json', JSON.stringify({ name: 'Gold', filter: { version: '0.0.1', root: { type: 'group', children: [] } } }));
      expect(segment.status).toBe(201);
      const id = (segment.body as { entity: { id: string } }).entity.id;
      const renamed = await send('PATCH', `/v1/project/${project}/segment/${id}`, 'application/x-www-form-urlencoded', 'name=Renamed');
      expect([renamed.status, renamed.body]).toEqual([400, NOT_JSON]);
      const read = await get(`/v1/project/${project}/segment/${id}`);
      expect((read.body as unknown as { entity: { name: string } }).entity.name).toBe('Gold');
    });

    it('refuses text with the same message on product, ingest and admin routes', async () => {
      expect(await send('POST', `/v1/project/${project}/audience/count`, 'text/plain', '{}')).toEqual({ status: 400, body: NOT_JSON });
      expect(await send('POST', `/v1/project/${project}/datasource/${dataSource.id}/stream/contacts`, 'text/plain;charset=UTF-8', '[{"_user_id":"u1"}]', dataSource.token)).toEqual({ status: 400, body: NOT_JSON });
      expect(await send('POST', '/admin/v1/organizations', 'application/x-www-form-urlencoded', 'name=Form&plan=s', process.env.MELD_ADMIN_TOKEN)).toEqual({ status: 400, body: NOT_JSON });
    });
  });
});
