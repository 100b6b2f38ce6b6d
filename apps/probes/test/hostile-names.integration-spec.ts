import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import { EventParameterEntity, EventTypeEntity } from '@meld/db';
import { seedTenancy, type Json } from '@meld/fixtures';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { addAttributes, type Contact, eventRow, insertContacts, memberRow, probeHeaders, startProbes } from './probes.fixture';

/**
 * Names that are members of Object.prototype (`constructor`, `toString`) or its accessor
 * (`__proto__`) are user data in a probe: as catalogue attributes and event parameters they are
 * profiled like any other, and as unknown names in a body they are refused naming the field.
 * Bodies carrying a `__proto__` key are refused by the JSON parser (ADR 0124).
 */
describe('probes: prototype member names are ordinary names', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  let t: Awaited<ReturnType<typeof seedTenancy>>;
  const ids = Array.from({ length: 3 }, () => randomUUID());
  // JSON.parse: an object literal's `__proto__` would set the prototype instead of a key.
  const values = (i: number) => JSON.parse(`{"constructor":"c${i % 2}","__proto__":"p${i % 2}"}`) as Record<string, string>;

  beforeAll(async () => {
    ({ app, base, db, ch } = await startProbes());
    t = await seedTenancy(db, 'hostile-names');
    await addAttributes(db, t.project.id, [
      { uid: 'constructor', type: 'string' },
      { uid: '__proto__', type: 'string' },
    ]);
    await insertContacts(ch, db, t.project.id, ids.map((id, i): [string, Contact] => [id, { str: values(i) }]));
    const purchase = await db.getRepository(EventTypeEntity).findOneByOrFail({ projectId: t.project.id, uid: 'purchase' });
    await db.getRepository(EventParameterEntity).insert([
      { eventTypeId: purchase.id, parameter: 'constructor', title: 'Constructor', dataType: 'string' },
      { eventTypeId: purchase.id, parameter: '__proto__', title: 'Proto', dataType: 'string' },
    ]);
    await ch.insert('audience_membership', ids.map((id, i) => memberRow(t.project.id, t.dataSource.id, `u${i}`, id)));
    await ch.insert('events', ids.map((_, i) => eventRow(t.project.id, t.dataSource.id, `u${i}`, 'purchase', new Date(Date.now() - 86_400_000), values(i))));
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  const probe = async (surface: 'audience/coverage' | 'event/volumes', body: unknown) => {
    const res = await fetch(`${base}/v1/project/${t.project.uid}/${surface}`, { method: 'POST', headers: probeHeaders(t, { surface }), body: typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const listed = (entry: Json, key = 'topValues') => entry[key].map((v: Json) => [v.value, v.count]);

  it('profiles attributes named constructor and __proto__, by default, by name and under a root on them', async () => {
    const all = await probe('audience/coverage', {});
    expect(all.status).toBe(200);
    const entry = (body: Json, uid: string) => body.metadata.attributes.find((a: Json) => a.uid === uid);
    expect(listed(entry(all.body, 'constructor'))).toEqual([['c0', 2], ['c1', 1]]);
    expect(listed(entry(all.body, '__proto__'))).toEqual([['p0', 2], ['p1', 1]]);
    // `__proto__` as a value (the attribute a condition reads) is data; only a key of that name is refused.
    const narrowed = await probe('audience/coverage', { root: { type: 'attribute_condition', key: '__proto__', operator: 'matches-string', values: ['p1'] }, attributes: ['constructor'] });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.metadata.denominator.count).toBe(1);
    expect(listed(narrowed.body.metadata.attributes[0])).toEqual([['c1', 1]]);
    const byName = await probe('audience/coverage', { root: { type: 'attribute_condition', key: 'constructor', operator: 'matches-string', values: ['c1'] }, attributes: ['constructor', 'toString'] });
    expect(byName.status).toBe(400);
    expect(byName.body.details.fields).toEqual([{ path: 'attributes[1]', message: 'unknown attribute "toString"' }]);
    const one = await probe('audience/coverage', { root: { type: 'attribute_condition', key: 'constructor', operator: 'matches-string', values: ['C1'] }, attributes: ['__proto__'] });
    expect(one.status).toBe(200);
    expect(one.body.metadata.denominator.count).toBe(1);
    expect(listed(one.body.metadata.attributes[0])).toEqual([['p1', 1]]);
  });

  it('lists event parameters named constructor and __proto__', async () => {
    const { status, body } = await probe('event/volumes', { event: 'purchase' });
    expect(status).toBe(200);
    const parameter = (uid: string) => body.metadata.event.parameters.find((p: Json) => p.uid === uid);
    expect(listed(parameter('constructor'), 'values')).toEqual([['c0', 2], ['c1', 1]]);
    expect(listed(parameter('__proto__'), 'values')).toEqual([['p0', 2], ['p1', 1]]);
  });

  it('refuses prototype member names that are not the project’s, naming the field', async () => {
    for (const [surface, body, field] of [
      ['audience/coverage', { attributes: ['toString'] }, 'attributes[0]'],
      ['audience/coverage', { datasource: 'constructor' }, 'datasource'],
      ['audience/coverage', { root: { type: 'attribute_condition', key: 'hasOwnProperty', operator: 'is-set', values: [] } }, 'root.key'],
      ['audience/coverage', { constructor: 1 }, 'constructor'],
      ['event/volumes', { event: 'constructor' }, 'event'],
      ['event/volumes', { event: '__proto__' }, 'event'],
      ['event/volumes', { datasource: '__proto__' }, 'datasource'],
      ['event/volumes', { root: { type: 'group_event', eventType: 'toString', children: [] } }, 'root.eventType'],
    ] as const) {
      const res = await probe(surface, body);
      expect(res.status).toBe(400);
      const paths = res.body.details.path !== undefined ? [res.body.details.path] : res.body.details.fields.map((f: Json) => f.path);
      expect(paths).toContain(field);
    }
    // A key named __proto__, even spelled with escapes, is refused by the JSON parser, naming its path.
    const proto = await probe('audience/coverage', '{"root":{"\\u005f_proto__":{"type":"group"}}}');
    expect(proto.status).toBe(400);
    expect(proto.body.message).toMatch(/\$\.root\.__proto__/);
  });
});
