import { randomUUID } from 'node:crypto';
import { type Json, type PrincipalSigner, principalSigner, seedTenancy } from '@meld/fixtures';
import { MAX_JSON_DEPTH } from '@meld/platform';
import { PROTOTYPE_NAMES } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { MAX_PARAMETER_DEPTH, MAX_PARAMETERS_BYTES } from '../src/events/event-parameters';
import { startIngest } from './app.fixture';

/** Hostile JSON against the real ingest app (ADR 0113): bounded bodies, bounded event parameters, clear errors. */
describe('hostile JSON (ingest)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let tenancy: Awaited<ReturnType<typeof seedTenancy>>;
  let dsToken: PrincipalSigner;

  beforeAll(async () => {
    ({ app, base, db } = await startIngest());
    tenancy = await seedTenancy(db);
    dsToken = principalSigner(tenancy, { kind: 'datasource', scopes: ['PROJECT_INGEST_WRITE', 'PROJECT_INGEST_READ'], dataSourceId: tenancy.dataSource.id }, 'ingest');
  });
  afterAll(() => app?.close());

  const postRaw = async (path: string, text: string) => {
    const url = `/v1/project/${tenancy.project.uid}/datasource/${tenancy.dataSource.id}/stream${path}`;
    const res = await fetch(`${base}${url}`, {
      method: 'POST',
      headers: { ...dsToken('POST', url), 'content-type': 'application/json' },
      body: text,
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const user = `u-${randomUUID().slice(0, 8)}`;
  const purchase = (extra: Record<string, unknown>) => ({ _user_id: user, _event_id: `e-${randomUUID()}`, _event_type: 'purchase', _event_parameters: { 'product-id': 'x' }, ...extra });

  it(`answers 400 naming the limit for a body nested deeper than ${MAX_JSON_DEPTH} levels, on every JSON route`, async () => {
    const deep = `[${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}]`;
    for (const path of ['/events', '/contacts']) {
      const res = await postRaw(path, deep);
      expect(res).toEqual({ status: 400, body: expect.objectContaining({ statusCode: 400, message: `request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels` }) });
    }
    // Just within the limit: the body parses and the item is judged on its own.
    const nested = (d: number): unknown => (d === 0 ? 1 : [nested(d - 1)]);
    const within = await postRaw('/events', JSON.stringify([purchase({ _event_parameters: { 'product-id': 'x', n: nested(MAX_JSON_DEPTH - 3) } })]));
    expect(within.status).not.toBe(400);
  });

  it('gives clear item errors for deep, NUL-carrying and oversized parameters and dates ClickHouse would wrap', async () => {
    expect((await postRaw('/contacts', JSON.stringify([{ _user_id: user }]))).status).toBe(202);
    const deep = JSON.parse(`${'{"a":'.repeat(MAX_PARAMETER_DEPTH + 1)}1${'}'.repeat(MAX_PARAMETER_DEPTH + 1)}`) as unknown;
    const res = await postRaw(
      '/events',
      JSON.stringify([
        purchase({ _event_parameters: { 'product-id': 'x', deep } }),
        purchase({ _event_parameters: { 'product-id': 'x', note: 'a\u0000b' } }),
        purchase({ _event_parameters: { 'product-id': 'x', blob: 'x'.repeat(MAX_PARAMETERS_BYTES) } }),
        purchase({ _event_date: '2106-02-08T00:00:00Z' }),
        purchase({ _event_date: '1969-07-20T20:17:00Z' }),
        purchase({}),
      ]),
    );
    expect(res.status).toBe(202);
    const items = res.body.entity.items as Json[];
    expect(items.map((i) => i.status)).toEqual(['error', 'error', 'error', 'error', 'error', 'success']);
    expect(items[0].errors).toEqual({ '_event_parameters.deep': [`must not nest more than ${MAX_PARAMETER_DEPTH} levels of lists and objects`] });
    expect(items[1].errors).toEqual({ '_event_parameters.note': ['must not contain the NUL character (U+0000)'] });
    expect(items[2].errors._event_parameters[0]).toMatch(`must be at most ${MAX_PARAMETERS_BYTES} bytes as JSON`);
    for (const i of [3, 4]) expect(items[i].errors).toEqual({ _event_date: ['must be between 1970-01-01T00:00:00Z and 2105-12-31T23:59:59Z'] });
  });

  it('refuses a number JSON cannot carry back (1e400 parses as Infinity and would be stored as null) as the field\'s error, saying why', async () => {
    expect((await postRaw('/contacts', JSON.stringify([{ _user_id: user }]))).status).toBe(202);
    const why = 'must be a finite number (1e400 and the like overflow to infinity)';
    const item = (parameters: string) => `{"_user_id":"${user}","_event_id":"e-${randomUUID()}","_event_type":"purchase","_event_parameters":{"product-id":"x",${parameters}}}`;
    const res = await postRaw('/events', `[${item('"score":1e400')},${item('"basket":{"prices":[1,-1e999]}')},${item('"score":1e300')},${item('"amount":1e400')}]`);
    expect(res.status).toBe(202);
    const items = res.body.entity.items as Json[];
    // `amount` is declared a number: its declaration and the bound on every parameter say the same thing, once.
    expect(items.map((i) => i.errors)).toEqual([{ '_event_parameters.score': [why] }, { '_event_parameters.basket': [why] }, undefined, { '_event_parameters.amount': [why] }]);
    // A contact attribute, new or declared a number: the same reason, not a bare "must be a number".
    const contacts = await postRaw('/contacts', `[{"_user_id":"${user}","lifetime_score":1e400},{"_user_id":"${user}","lifetime_score":-1e400}]`);
    expect((contacts.body.entity.items as Json[]).map((i) => i.errors)).toEqual([{ lifetime_score: [why] }, { lifetime_score: [why] }]);
  });

  it.each(PROTOTYPE_NAMES)('takes %s as a parameter name, and names it as an unknown event field, never a 500', async (name) => {
    const res = await postRaw(
      '/events',
      `[${JSON.stringify(purchase({})).slice(0, -2)}, "${name}": {"${name}": 1}}},` +
        `${JSON.stringify(purchase({})).slice(0, -1)}, "${name}": 1}]`,
    );
    expect(res.status).toBeLessThan(500);
    if (name === '__proto__') {
      // Fastify's parser refuses a `__proto__` key outright (prototype poisoning): a 400 that says so.
      expect(res.status).toBe(400);
      return;
    }
    expect(res.status).toBe(202);
    const items = res.body.entity.items as Json[];
    expect(items[0].status).toBe('success');
    expect(items[1].errors).toEqual({ [name]: [`unknown event field ${name}`] });
  });

  it.each(PROTOTYPE_NAMES)('takes %s as a contact attribute name without a 500', async (name) => {
    const res = await postRaw('/contacts', `[{"_user_id": "${user}-${name}", "${name}": "x"}]`);
    expect(res.status).toBeLessThan(500);
  });
});
