import { randomUUID } from 'node:crypto';
import type { Json } from '@meld/fixtures';
import { startIngestWithTenancy } from './app.fixture';

/**
 * A new custom attribute is created by the first item that uses it and passes (ADR 0035): an
 * item refused for that value creates nothing, so a typo or a bad first value does not type
 * the name for good (nor take a ClickHouse slot, ADR 0064).
 */
describe('new custom attributes (ingest)', () => {
  let ingest: Awaited<ReturnType<typeof startIngestWithTenancy>>;

  beforeAll(async () => {
    ingest = await startIngestWithTenancy();
    await ingest.db.query(`INSERT INTO event_types (project_id, uid, name, category) VALUES ($1, 'visit', 'Visit', 'web')`, [ingest.tenancy.project.id]);
  });
  afterAll(() => ingest?.app.close());

  const stream = () => `${ingest.base}/v1/project/${ingest.tenancy.project.uid}/datasource/${ingest.tenancy.dataSource.id}/stream`;
  const post = async (path: '/contacts' | '/events', body: unknown) => {
    const target = `${stream()}${path}`;
    const res = await fetch(target, { method: 'POST', headers: { ...ingest.dsToken('POST', target), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const attribute = async (name: string) =>
    (await ingest.db.query(`SELECT type, multivalue FROM attributes WHERE project_id = $1 AND uid = $2`, [ingest.tenancy.project.id, name]))[0] as { type: string; multivalue: boolean } | undefined;
  const uid = () => `u-${randomUUID().slice(0, 8)}`;
  const name = () => `a${randomUUID().slice(0, 8)}`;

  const refused: [string, () => unknown, string][] = [
    ['a list whose values are not all of its first value\'s type', () => [1, 'a'], 'every value must be a number'],
    ['a string with U+0000', () => 'a\u0000b', 'must not contain the NUL character (U+0000)'],
    ['a string of 3,000 characters', () => 'x'.repeat(3000), 'must be at most 2048 characters'],
    ['a list of 101 values', () => Array.from({ length: 101 }, (_, i) => i), 'must have at most 100 values'],
  ];

  it.each(refused)('a contact item refused for its first value (%s) creates nothing; a later write of another type creates it as that type', async (_, value, message) => {
    const attr = name();
    const res = await post('/contacts', [{ _user_id: uid(), [attr]: value() }]);
    expect([res.status, res.body.entity.items[0].errors]).toEqual([422, { [attr]: [message] }]);
    expect(await attribute(attr)).toBeUndefined();
    const later = await post('/contacts', [{ _user_id: uid(), [attr]: [true, false] }]);
    expect(later.status).toBe(202);
    expect(await attribute(attr)).toEqual({ type: 'boolean', multivalue: true });
  });

  it('in one batch, the item that fails creates nothing and the one that passes creates what it needs (typed by its own value)', async () => {
    const attr = name();
    const res = await post('/contacts', [
      { _user_id: uid(), [attr]: [1, 'a'] },
      { _user_id: uid(), [attr]: ['a', 'b'] },
    ]);
    expect(res.status).toBe(202);
    expect(res.body.entity.items.map((i: Json) => i.status)).toEqual(['error', 'success']);
    expect(await attribute(attr)).toEqual({ type: 'string', multivalue: true });
  });

  it('an event whose _user_data is refused for a new name\'s value creates nothing', async () => {
    const attr = name();
    const res = await post('/events', [{ _user_id: uid(), _event_id: randomUUID(), _event_type: 'visit', _user_data: { [attr]: 'x'.repeat(3000) } }]);
    expect([res.status, res.body.entity.items[0].errors]).toEqual([422, { [`_user_data.${attr}`]: ['must be at most 2048 characters'] }]);
    expect(await attribute(attr)).toBeUndefined();
    expect((await post('/events', [{ _user_id: uid(), _event_id: randomUUID(), _event_type: 'visit', _user_data: { [attr]: 7 } }])).status).toBe(202);
    expect(await attribute(attr)).toEqual({ type: 'number', multivalue: false });
  });
});
