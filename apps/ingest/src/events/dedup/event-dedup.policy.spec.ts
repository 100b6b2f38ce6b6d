import type { PoolClient } from 'pg';
import type { WriteCommand } from '../../write/write.command';
import type { ParsedEvent } from '../event-item';
import { type EventsRepository, ResentEventIds } from '../events.repository';
import { EventDedupPolicy } from './event-dedup.policy';

const PROJECT = '00000000-0000-4000-8000-000000000001';
const SOURCE = '00000000-0000-4000-8000-000000000002';

/**
 * Which repository calls each kind of batch makes, in order: the round trips of the two
 * strategies (the statements themselves are proven on Postgres by events.integration-spec).
 */
function recordingRepository(o: { resentOnMark?: boolean; resentOnLock?: boolean; commitHangs?: boolean } = {}) {
  const calls: string[] = [];
  const tx = {
    client: {} as PoolClient,
    rows: [],
    commit: () => {
      calls.push('commit');
      return o.commitHangs ? new Promise<void>(() => undefined) : Promise.resolve();
    },
    release: async () => void calls.push('release'),
  };
  const context = { dataSourceId: SOURCE, types: new Map() };
  const repository = {
    openAndMark: async (_p: string, _d: string, _t: string[], marks: { userId: string; eventId: string }[]) => {
      calls.push('openAndMark');
      if (o.resentOnMark) throw new ResentEventIds();
      return { tx, context, marked: { live: new Set(marks.map((m) => m.userId)), fresh: new Set(marks.map((m) => m.eventId)) } };
    },
    context: async () => {
      calls.push('context');
      return context;
    },
    unmark: async (_c: PoolClient, _p: string, ids: readonly string[]) => void calls.push(`unmark ${ids.join(',')}`),
    openAndLock: async (_p: string, _d: string, events: readonly { userId: string; eventId: string }[], m: { resent: boolean }) => {
      calls.push(`openAndLock${m.resent ? ' resent' : ''}`);
      if (o.resentOnLock && !m.resent) throw new ResentEventIds();
      return { tx, marked: { live: new Set(events.map((e) => e.userId)), fresh: new Set(events.map((e) => e.eventId)) } };
    },
  };
  return { calls, repository: repository as unknown as EventsRepository };
}

const item = (eventId: string, extra: Record<string, unknown> = {}) => ({ _user_id: 'u1', _event_id: eventId, _event_type: 'purchase', ...extra });
const command = (body: unknown[]): WriteCommand => ({ projectId: PROJECT, dataSourceId: SOURCE, body, receivedAt: new Date().toISOString() }) as unknown as WriteCommand;
const parsed = (eventId: string) => ({ userId: 'u1', eventId }) as ParsedEvent;

async function write(repository: EventsRepository, calls: string[], body: unknown[], candidates: ParsedEvent[]) {
  const opened = await new EventDedupPolicy(repository).open(command(body));
  const produced: string[] = [];
  try {
    await opened!.produceFresh(candidates, async (events) => {
      calls.push('produce');
      produced.push(...events.map((e) => e.eventId));
    });
  } finally {
    await opened!.release();
  }
  return produced;
}

describe('EventDedupPolicy', () => {
  it('marks a batch without _user_data first: the marks with BEGIN, then unmark and produce; COMMIT after the answer', async () => {
    // A COMMIT that never ends: the write is answered all the same.
    const { calls, repository } = recordingRepository({ commitHangs: true });
    // e2 failed its checks: its mark is taken back.
    expect(await write(repository, calls, [item('e1'), item('e2')], [parsed('e1')])).toEqual(['e1']);
    expect(calls).toEqual(['openAndMark', 'unmark e2', 'produce', 'commit', 'release']);
  });

  it('checks a batch with _user_data first: the context alone, then BEGIN with lock-and-mark, produce and COMMIT before the answer', async () => {
    const { calls, repository } = recordingRepository();
    expect(await write(repository, calls, [item('e1', { _user_data: { city: 'Paris' } })], [parsed('e1')])).toEqual(['e1']);
    expect(calls).toEqual(['context', 'openAndLock', 'produce', 'commit', 'release']);
  });

  it('holds no transaction between opening a check-first write and produceFresh (its _user_data upsert takes a connection of its own)', async () => {
    const { calls, repository } = recordingRepository();
    const opened = await new EventDedupPolicy(repository).open(command([item('e1', { _user_data: { city: 'Paris' } })]));
    expect(calls).toEqual(['context']);
    await opened!.release();
    expect(calls).toEqual(['context']);
  });

  it('sends a batch holding an id accepted before the check-first way, skipping existing ids', async () => {
    const { calls, repository } = recordingRepository({ resentOnMark: true });
    expect(await write(repository, calls, [item('e1')], [parsed('e1')])).toEqual(['e1']);
    expect(calls).toEqual(['openAndMark', 'context', 'openAndLock resent', 'produce', 'commit', 'release']);
  });

  it('writes a check-first batch that meets an accepted id again in a new transaction', async () => {
    const { calls, repository } = recordingRepository({ resentOnLock: true });
    expect(await write(repository, calls, [item('e1', { _user_data: { city: 'Paris' } })], [parsed('e1')])).toEqual(['e1']);
    // The first BEGIN with lock-and-mark rolled back on the unique key and gave its connection back.
    expect(calls).toEqual(['context', 'openAndLock', 'openAndLock resent', 'produce', 'commit', 'release']);
  });

  it('produces each id once even when a batch names it twice (check-first, resent)', async () => {
    const { calls, repository } = recordingRepository({ resentOnMark: true });
    expect(await write(repository, calls, [item('e1'), item('e1')], [parsed('e1'), parsed('e1')])).toEqual(['e1']);
  });
});
