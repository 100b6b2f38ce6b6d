import type { Sql } from '@meld/clickhouse';
import { audienceCount, audiencePage } from './compile';
import type { AudienceFilterNode } from './types';

/** The audience_hash space (UInt64). */
export const HASH_SPACE = 2n ** 64n;
/** The narrowest window a caller may ask for: a forged tiny span costs at most ~24 doublings. */
export const MIN_SPAN = HASH_SPACE >> 24n;

export interface PagePosition {
  hash: string;
  id: string;
}

export interface WindowedPageOptions {
  projectId: string;
  root?: AudienceFilterNode;
  now?: Date;
  /** Keyset position: the page starts after it (a scroll). */
  after?: PagePosition;
  /** Contacts skipped before the page (a search). */
  offset?: number;
  limit: number;
  /** Window width the previous page ended with (a scroll's next page); absent: sized from a count. Clamped. */
  span?: bigint;
}

export interface WindowedPage {
  rows: PagePosition[];
  /** Whether matching contacts follow the page. */
  more: boolean;
  /** The window width to start the next page with. */
  span: bigint;
}

/**
 * One page of the contacts matching a filter, read window by window of audience_hash (uniform,
 * the snapshot's key after the project; ADR 0330): each window is sized to hold about twice what
 * the page needs at the filter's density (from its exact count, or the previous page's width), and
 * a window holding too few is followed by one twice as wide. A page then scans about twice its own
 * size, not everything after its position, and the rows come in the same order as one query over
 * everything would give them. One row beyond the page is read to tell whether more follow.
 * `query` runs a statement on the snapshot's database.
 */
export async function windowedAudiencePage(query: <T>(statement: Sql) => Promise<T[]>, opts: WindowedPageOptions): Promise<WindowedPage> {
  const { projectId, root, now, after, limit } = opts;
  const offset = opts.offset ?? 0;
  const needed = offset + limit + 1;
  let span = opts.span === undefined ? await initialSpan(query, opts, needed) : clamp(opts.span);
  if (span === 0n) return { rows: [], more: false, span: MIN_SPAN };
  const rows: PagePosition[] = [];
  let start = after ? BigInt(after.hash) : 0n;
  let keyset = after;
  for (;;) {
    const end = start + span;
    const window = { from: start.toString(), below: end < HASH_SPACE ? end.toString() : undefined };
    rows.push(...(await query<PagePosition>(audiencePage({ projectId, root, now, after: keyset, window, limit: needed - rows.length }))));
    if (rows.length >= needed || end >= HASH_SPACE) break;
    // Too few in this window: the next starts where it ended (past any keyset position), twice as wide.
    // Clamped: wider than the hash space says nothing more, and the width goes into the scroll id.
    [start, keyset, span] = [end, undefined, clamp(span * 2n)];
  }
  return { rows: rows.slice(offset, offset + limit), more: rows.length >= needed, span };
}

/** A window expected to hold twice the rows needed, from the filter's exact count; 0 when nothing matches. */
async function initialSpan(query: <T>(statement: Sql) => Promise<T[]>, opts: WindowedPageOptions, needed: number): Promise<bigint> {
  const [row] = await query<{ matching: string }>(audienceCount({ projectId: opts.projectId, root: opts.root, now: opts.now, counts: [['matching']] }));
  const matching = BigInt(Math.max(0, Number(row?.matching ?? 0)));
  return matching === 0n ? 0n : clamp((HASH_SPACE * BigInt(2 * needed)) / matching);
}

function clamp(span: bigint): bigint {
  return span > HASH_SPACE ? HASH_SPACE : span < MIN_SPAN ? MIN_SPAN : span;
}
