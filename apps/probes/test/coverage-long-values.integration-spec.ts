import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import { seedTenancy, type Json } from '@meld/fixtures';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { addAttributes, type Contact, insertContacts, probeHeaders, startProbes } from './probes.fixture';

/**
 * Values as long as ingest takes them (2,048 characters, here three UTF-8 bytes each) in several
 * multivalue attributes: the coverage reads of one call stay within ClickHouse's 256 KiB
 * max_query_size whatever the values listed, so the project's default profile answers.
 */
describe('audience coverage: long multivalue values', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  let t: Awaited<ReturnType<typeof seedTenancy>>;
  const ATTRIBUTES = ['topics', 'quotes', 'notes', 'slogans', 'mottos'];
  const long = (i: number) => `${'語'.repeat(2_040)}-${String(i).padStart(3, '0')}`;

  beforeAll(async () => {
    ({ app, base, db, ch } = await startProbes());
    t = await seedTenancy(db, 'coverage-long-values');
    await addAttributes(db, t.project.id, ATTRIBUTES.map((uid) => ({ uid, type: 'string' as const, multivalue: true })));
    // 40 contacts, each holding two of twelve long values per attribute: ten are listed, two are other.
    const contacts = Array.from({ length: 40 }, (_, i): [string, Contact] => [randomUUID(), { str: Object.fromEntries(ATTRIBUTES.map((uid) => [uid, [long(i % 12), long((i + 1) % 12)]])) }]);
    await insertContacts(ch, db, t.project.id, contacts);
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  it('profiles them by default: ten values listed per attribute, the contacts holding another counted', async () => {
    const res = await fetch(`${base}/v1/project/${t.project.uid}/audience/coverage`, { method: 'POST', headers: probeHeaders(t), body: JSON.stringify({}) });
    const body = (await res.json()) as Json;
    expect(res.status).toBe(200);
    for (const uid of ATTRIBUTES) {
      const entry = body.metadata.attributes.find((a: Json) => a.uid === uid);
      expect(entry).toMatchObject({ observedFilled: 40, distinctValues: 12 });
      expect(entry.topValues).toHaveLength(10);
      const listed = new Set(entry.topValues.map((v: Json) => v.value));
      const other = Array.from({ length: 40 }, (_, i) => [long(i % 12), long((i + 1) % 12)]).filter((held) => held.some((v) => !listed.has(v))).length;
      expect(entry.topValuesOther).toBe(other);
    }
  });
});
