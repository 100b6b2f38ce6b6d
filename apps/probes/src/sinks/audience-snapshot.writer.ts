import { type ClickHouse, join, sql } from '@meld/clickhouse';
import type { AudienceContactRow } from './audience-contact-row';

/** A row of `audience_snapshot` (migration 0006): a state of a contact, +1 stored, −1 cancelled. */
export type SnapshotRow = AudienceContactRow & { sign: 1 | -1 };

/** Contacts per read-back query: 500 ids and their hashes stay well under ClickHouse's 256 KiB max_query_size. */
const READ_CHUNK = 500;

const keyOf = (r: Pick<AudienceContactRow, 'project_id' | 'audience_id'>) => `${r.project_id}\u0000${r.audience_id}`;

/**
 * Writes the states of a batch to the collapsing snapshot (ADR 0223). Per contact: the state stored
 * now is read back (the primary key: project_id, audience_hash), and a newer state writes a −1
 * copy of it and a +1 row of itself, so `sum(sign)` over a plain scan counts each contact once.
 * A state not newer than the stored one (Kafka redelivery, a replayed older message) writes
 * nothing; a deletion is a state (deleted = 1) so that its version is remembered. A failed insert
 * rejects and the sink runner retries the batch: the retry reads again, so it never writes a −1
 * for a state that is not stored or a second +1 for one that is. The runner has one writer and
 * the audience sink lets a write fail only once all its parts settled, so no two calls run at once
 * and none reads while another's insert is in flight (ADR 0339); a batch may hold several states of
 * a contact (Kafka keys the audience topic by contact, in order), and the newest is written.
 */
export class AudienceSnapshotWriter {
  constructor(private readonly ch: ClickHouse) {}

  async write(rows: readonly AudienceContactRow[]): Promise<void> {
    const newest = new Map<string, AudienceContactRow>();
    for (const r of rows) {
      const had = newest.get(keyOf(r));
      if (!had || BigInt(r.version) > BigInt(had.version)) newest.set(keyOf(r), r);
    }
    if (newest.size === 0) return;
    const batch = [...newest.values()];
    const chunks = Array.from({ length: Math.ceil(batch.length / READ_CHUNK) }, (_, i) => batch.slice(i * READ_CHUNK, (i + 1) * READ_CHUNK));
    const stored = new Map((await Promise.all(chunks.map((c) => this.storedStates(c)))).flatMap((m) => [...m]));
    const out: SnapshotRow[] = [];
    for (const [key, row] of newest) {
      const current = stored.get(key);
      if (current && BigInt(current.version) >= BigInt(row.version)) continue;
      if (current) out.push({ ...current, sign: -1 });
      out.push({ ...row, sign: 1 });
    }
    if (out.length) await this.ch.insert('audience_snapshot', out);
  }

  /** The stored state of each contact: its newest version whose rows do not cancel out. */
  private async storedStates(rows: readonly AudienceContactRow[]): Promise<Map<string, AudienceContactRow>> {
    const byProject = new Map<string, string[]>();
    for (const r of rows) {
      const ids = byProject.get(r.project_id);
      if (ids) ids.push(r.audience_id);
      else byProject.set(r.project_id, [r.audience_id]);
    }
    const clauses = [...byProject].map(
      ([projectId, ids]) => sql`(project_id = ${projectId} AND audience_hash IN (${join(ids.map((id) => sql`cityHash64(${id})`))}) AND audience_id IN (${join(ids)}))`,
    );
    const found = await this.ch.query<SnapshotRow>(sql`SELECT * FROM audience_snapshot WHERE ${join(clauses, ' OR ')}`);
    const net = new Map<string, { row?: AudienceContactRow; sign: number }>();
    for (const r of found) {
      const state = `${keyOf(r)}\u0000${r.version}`;
      const n = net.get(state) ?? { sign: 0 };
      n.sign += Number(r.sign);
      if (Number(r.sign) > 0) {
        const { sign: _sign, ...row } = r;
        n.row = row;
      }
      net.set(state, n);
    }
    const current = new Map<string, AudienceContactRow>();
    for (const { row, sign } of net.values()) {
      if (!row || sign <= 0) continue;
      const had = current.get(keyOf(row));
      if (!had || BigInt(row.version) > BigInt(had.version)) current.set(keyOf(row), row);
    }
    return current;
  }
}
