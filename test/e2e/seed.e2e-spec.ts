import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@meld/testing';
import { type OwnStores, ownStores } from './support/own-stores';
import { startSystem, type System } from './support/system';

// `meld seed` against the eight apps as processes: the data arrives through the public ingest
// API, overlapping sources merge, a seed killed mid-way resumes to the same result, a
// larger --contacts later adds only the difference, and the seed only succeeds once every
// person written is merged and every event stored (ADR 0241). The system runs on stores of its
// own (and its own broker, as every e2e system): `meld test` runs it beside the serial e2e phase
// (ADR 0306).
const ROOT = join(__dirname, '../..');

const GATEWAY_PORT = 21080;
const BASE = `http://127.0.0.1:${GATEWAY_PORT}`;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

function meld(args: string[]): { done: Promise<{ code: number; out: string }>; kill(): void } {
  const child = spawn(process.execPath, [join(ROOT, 'tools/cli/meld.js'), ...args], { cwd: ROOT, env: { ...process.env, MELD_GATEWAY_URL: BASE }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return { done: new Promise((resolve) => child.on('exit', (code) => resolve({ code: code ?? -1, out }))), kill: () => child.kill('SIGKILL') };
}

describe('meld seed through the public ingest API', () => {
  let system: System;
  let stores: OwnStores | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'meld-seed-'));

  beforeAll(async () => {
    stores = await ownStores('seed');
    system = await startSystem('seed', GATEWAY_PORT, stores.env);
  }, 180000);
  afterAll(async () => {
    await system?.stop();
    await stores?.stop();
  });

  async function count(state: Json, root?: unknown): Promise<number> {
    const admin = { authorization: `Bearer ${process.env.MELD_ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const token = (await (await fetch(`${BASE}/admin/v1/organizations/${state.organizationId}/tokens`, { method: 'POST', headers: admin, body: JSON.stringify({ scopes: ['PROJECT_AUDIENCE_READ'], projects: [state.projectUid] }) })).json()) as Json;
    const res = await fetch(`${BASE}/v1/project/${state.projectUid}/audience/count`, { method: 'POST', headers: { authorization: `Bearer ${token.metadata.token}`, 'content-type': 'application/json' }, body: JSON.stringify(root ? { root } : {}) });
    expect(res.status).toBe(200);
    return ((await res.json()) as Json).metadata.totalHits;
  }

  it('seeds, merges overlapping sources, and resumes a seed killed mid-way to the same result', async () => {
    const stateFile = join(dir, 'state.json');
    const first = meld(['seed', '--contacts', '3000', '--events', '0', '--concurrency', '1', '--state', stateFile, '--no-progress']);
    await waitFor('the seed to save progress', async () => existsSync(stateFile) && JSON.parse(readFileSync(stateFile, 'utf8')).contactsDone >= 600, { timeoutMs: 60000, intervalMs: 20 });
    first.kill();
    await first.done;
    const cut = JSON.parse(readFileSync(stateFile, 'utf8'));
    expect(cut.contactsDone).toBeLessThan(3000);

    // A small --max-ahead makes the seed wait for identity-merge on the way (ADR 0241).
    const resumed = await meld(['seed', '--contacts', '3000', '--events', '4000', '--max-ahead', '1000', '--state', stateFile, '--json']).done;
    expect([resumed.code, resumed.out]).toEqual([0, expect.stringContaining('"project"')]);
    const summary = JSON.parse(resumed.out.slice(resumed.out.indexOf('{')));
    expect(summary).toMatchObject({ project: cut.projectUid, contacts: { done: 3000, failed: 0 }, events: { done: 4000, failed: 0 } });
    // The seed itself waited until every person written was merged and every event stored.
    expect([summary.merged, summary.eventsStored]).toEqual([3000, 4000]);
    const state = JSON.parse(readFileSync(stateFile, 'utf8'));
    // 3000 contacts, 30% of them in both sources: about 3900 source contacts merge into 3000.
    await waitFor('3000 merged audience contacts', async () => (await count(state)) === 3000, { timeoutMs: 60000, intervalMs: 500 });
    const buyers = { type: 'group_event', eventType: 'order_completed', children: [] };
    await waitFor('order events in the event store', async () => (await count(state, buyers)) > 0, { timeoutMs: 30000, intervalMs: 500 });

    const more = await meld(['seed', '--contacts', '3500', '--events', '4000', '--state', stateFile, '--json']).done;
    expect(more.code).toBe(0);
    const extended = JSON.parse(more.out.slice(more.out.indexOf('{')));
    expect([extended.contacts.done, extended.merged, extended.eventsStored]).toEqual([3500, 3500, 4000]);
    await waitFor('3500 merged audience contacts', async () => (await count(state)) === 3500, { timeoutMs: 60000, intervalMs: 500 });

    // People written but lost on the way (as the dev broker drops them): the state claims 100
    // more than were sent, so they never merge; the seed says so and fails instead of succeeding.
    writeFileSync(stateFile, JSON.stringify({ ...JSON.parse(readFileSync(stateFile, 'utf8')), contactsDone: 3600 }));
    const lost = await meld(['seed', '--contacts', '3600', '--events', '4000', '--stall-seconds', '2', '--state', stateFile, '--json']).done;
    expect(lost.code).toBe(1);
    expect(lost.out).toContain('only 3,500 of 3,600 people are merged into the audience (100 missing)');
    expect(lost.out).toContain('keeps only 5 MB');
    expect(JSON.parse(lost.out.slice(lost.out.indexOf('{')))).toMatchObject({ merged: 3500, eventsStored: null });

    // Every read token a run minted is revoked, by the run itself (even the one that failed) or,
    // for the run killed mid-way, by the next run.
    const listed = (await (await fetch(`${BASE}/admin/v1/organizations/${state.organizationId}/tokens`, { headers: { authorization: `Bearer ${process.env.MELD_ADMIN_TOKEN}` } })).json()) as Json;
    const seedTokens = (listed.entity as Json[]).filter((t) => t.label === 'meld seed');
    expect(seedTokens.length).toBe(4);
    expect(seedTokens.filter((t) => t.revokedAt === null)).toEqual([]);
  }, 240000);

  it('--help prints help and does nothing; an unknown flag is an error', async () => {
    const help = await meld(['seed', '--help']).done;
    expect([help.code, help.out]).toEqual([0, expect.stringContaining('usage: meld seed')]);
    const bad = await meld(['seed', '--contact', '5']).done;
    expect(bad.code).not.toBe(0);
    expect(bad.out).toContain("Unknown option '--contact'");
  });
});
