import type { Client } from 'pg';
import { compileListQuery } from '../../src/list-query/compile';
import { parseListQuery } from '../../src/list-query/parse';
import { itemTables } from './item-tables';
import { ITEMS } from './test-resource';

// `eqi`, `nei`, `ini`, `nini` and the `*i` string operators ignore case beyond ASCII, on a
// database whose ctype is C (as ours, `initdb --no-locale`), where `lower()` alone leaves `É`
// as it is (ADR 0055).

const ROWS = [
  { id: 'a', name: 'ÉMILE Zola', drink: 'CAFÉ', tag: 'ÜBER' },
  { id: 'b', name: 'İstanbul', drink: 'чай', tag: 'vip' },
  { id: 'c', name: 'ΣΟΦΟΣ', drink: 'ǅ', tag: 'Ωmega' },
  { id: 'd', name: 'aİ', drink: 'tea', tag: 'x' },
  { id: 'e', name: null, drink: null, tag: null },
];

describe('list query: case-insensitive operators on Unicode text (Postgres)', () => {
  let db: Client;

  beforeAll(async () => {
    db = await itemTables();
    for (const r of ROWS) {
      await db.query(`INSERT INTO list_query_items (id, name, attributes) VALUES ($1, $2, $3)`, [r.id, r.name, JSON.stringify(r.drink === null ? {} : { drink: r.drink })]);
      if (r.tag !== null) await db.query(`INSERT INTO list_query_tags VALUES ($1, $2)`, [r.id, r.tag]);
    }
  });
  afterAll(() => db.end());

  async function ids(query: string): Promise<string[]> {
    const c = compileListQuery(parseListQuery(query, ITEMS), ITEMS);
    const { rows } = await db.query(`SELECT t.id FROM list_query_items t WHERE ${c.where}`, c.params.slice(0, -2));
    return rows.map((r: { id: string }) => r.id).sort();
  }

  it.each([
    ['name_eqi=émile zola', ['a']],
    ['name_nei=émile zola', ['b', 'c', 'd', 'e']],
    ['name_eqi=σοφος', ['c']],
    ['name_eqi=İSTANBUL', ['b']],
    ['name_ini=x|ÉMILE ZOLA|σοφος', ['a', 'c']],
    ['name_nini=émile zola|σοφος', ['b', 'd', 'e']],
    ['name_containsi=émi', ['a']],
    ['name_ncontainsi=émi', ['b', 'c', 'd', 'e']],
    ['name_startsi=éMI', ['a']],
    ['name_endsi=ΦΟΣ', ['c']],
    // Lowering lengthens `İ` (to `i` + U+0307): the suffix is compared at its lowered length.
    ['name_endsi=İ', ['d']],
    ['attributes*drink_eqi=café', ['a']],
    ['attributes*drink_eqi=ЧАЙ', ['b']],
    ['attributes*drink_eqi=ǆ', ['c']],
    ['tags*label_eqi=über', ['a']],
    ['tags*label_startsi=ω', ['c']],
  ])('%s → %j', async (query, expected) => {
    expect(await ids(query)).toEqual(expected);
  });

  it('the case-sensitive operators still tell case apart', async () => {
    expect(await ids('name_eq=émile zola')).toEqual([]);
    expect(await ids('name_contains=émi')).toEqual([]);
    expect(await ids('attributes*drink_eq=CAFÉ')).toEqual(['a']);
  });
});
