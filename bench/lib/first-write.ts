import type { BenchTenant } from './tenant';

export interface FirstWrite {
  /** ms from the 202 of the write to the merged contact answering its lookup (ingest → identity-merge). */
  readableMs: number;
  /** ms from the 202 to the audience count including it (… → probes' audience sink → ClickHouse). */
  countedMs: number;
}

const POLL_MS = 5;
const GIVE_UP_MS = 60_000;

/**
 * One contact written through the gateway after a quiet spell, timed along both consuming hops
 * (issue 20 item 4: "no added latency for the first write after idle"). `n` makes the contact
 * and its name unique in the tenant, so the count of that name turns from 0 to 1.
 */
export async function timeFirstWrite(gateway: string, tenant: BenchTenant, n: number): Promise<FirstWrite> {
  const project = tenant.project.uid;
  const source = tenant.dataSources[0];
  const userId = `idle-${n}`;
  const name = `Idle${n}`;
  const read = { authorization: `Bearer ${tenant.productToken}` };
  const res = await fetch(`${gateway}/v1/project/${project}/datasource/${source.id}/stream/contacts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${source.token}`, 'content-type': 'application/json' },
    body: JSON.stringify([{ _user_id: userId, _first_name: name }]),
  });
  if (res.status !== 202) throw new Error(`write answered ${res.status}: ${await res.text()}`);
  const accepted = performance.now();
  const readable = until(async () => (await fetch(`${gateway}/v1/project/${project}/audience/user/${userId}`, { headers: read })).status === 200);
  const filter = JSON.stringify({ root: { type: 'attribute_condition', key: '_first_name', operator: 'matches-string', values: [name] } });
  const counted = until(async () => {
    const r = await fetch(`${gateway}/v1/project/${project}/audience/count`, { method: 'POST', headers: { ...read, 'content-type': 'application/json' }, body: filter });
    return r.status === 200 && ((await r.json()) as { metadata: { totalHits: number } }).metadata.totalHits === 1;
  });
  return { readableMs: (await readable) - accepted, countedMs: (await counted) - accepted };
}

/** Resolves to the time `check` first held, polled every POLL_MS. */
async function until(check: () => Promise<boolean>): Promise<number> {
  const deadline = performance.now() + GIVE_UP_MS;
  while (performance.now() < deadline) {
    if (await check()) return performance.now();
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  throw new Error(`not there after ${GIVE_UP_MS / 1000} s`);
}
