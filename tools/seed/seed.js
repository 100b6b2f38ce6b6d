'use strict';
// `meld seed`: fills a project with realistic contacts and events through the public ingest
// API of the running gateway (the same path a customer's integration takes), with a live
// progress bar, resumable from a state file, and a summary at the end.
const fs = require('node:fs');
const path = require('node:path');
const { adminClient, expectOk } = require('../cli/commands/admin');
const { contact, event, sourcesOf, EVENT_TYPES, ATTRIBUTES } = require('./generator');

const BATCH = 100; // the ingest API's largest batch

/** The tenant to fill: a new one (organization on plan xl, project merging on `_email`). */
async function createTenant(client, sources) {
  const organization = (await expectOk(client, 'POST', 'organizations', { name: 'Seed organization', plan: 'xl' })).entity;
  const project = (await expectOk(client, 'POST', `organizations/${organization.id}/projects`, { name: 'Seed project', mergingAttributes: ['_email'], locale: 'en_GB' })).entity;
  return { organizationId: organization.id, projectUid: project.uid, sources: await addSources(client, project.uid, sources) };
}

async function addSources(client, projectUid, count, from = 0) {
  const names = ['Web', 'CRM', 'Mobile app', 'Shop', 'Support'];
  const out = [];
  for (let k = from; k < count; k++) {
    const ds = await expectOk(client, 'POST', `projects/${projectUid}/datasources`, { name: names[k] ?? `Source ${k + 1}`, priority: k });
    out.push({ id: ds.entity.id, token: ds.metadata.token });
  }
  return out;
}

/** Declares the seed's attributes and event types; ones already declared (409) are fine. */
async function declareCatalogue(client, projectUid) {
  const tolerate = async (p) => {
    const res = await client.call('POST', `projects/${projectUid}/${p.kind}`, p.body);
    if (res.status >= 300 && res.status !== 409) throw new Error(`POST ${p.kind} answered ${res.status}: ${JSON.stringify(res.body)}`);
  };
  for (const a of ATTRIBUTES) await tolerate({ kind: 'attributes', body: a });
  for (const t of EVENT_TYPES) await tolerate({ kind: 'event-types', body: t });
}

/**
 * Sends `items(index)` for indexes [from, to) in batches of 100, `concurrency` requests at
 * once; `onDone(upTo)` is called with the end of the contiguous prefix that succeeded (what
 * a resume may skip). A batch that fails is retried with backoff; a 4xx other than 429 stops.
 */
async function pump({ from, to, concurrency, send, onProgress, onDone }) {
  let next = from;
  const finished = new Map(); // batch start → end, completed out of order
  let prefix = from;
  const worker = async () => {
    while (next < to) {
      const start = next;
      const end = Math.min(to, start + BATCH);
      next = end;
      const outcome = await send(start, end);
      onProgress(end - start, outcome);
      finished.set(start, end);
      while (finished.has(prefix)) {
        const e = finished.get(prefix);
        finished.delete(prefix);
        prefix = e;
      }
      onDone(prefix);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

async function post(url, token, body, attempt = 0) {
  let res;
  try {
    res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(30000) });
  } catch (err) {
    if (attempt >= 8) throw err;
    await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
    return post(url, token, body, attempt + 1);
  }
  if (res.status === 429 || res.status >= 500) {
    await res.body?.cancel();
    if (attempt >= 8) throw new Error(`${url} answered ${res.status} ${attempt + 1} times`);
    const reset = Number(res.headers.get('x-ratelimit-reset'));
    await new Promise((r) => setTimeout(r, res.status === 429 && reset > 0 ? Math.min(reset * 1000, 60000) : 200 * 2 ** attempt));
    return post(url, token, body, attempt + 1);
  }
  const json = await res.json().catch(() => ({}));
  if (res.status !== 202 && res.status !== 422) throw new Error(`${url} answered ${res.status}: ${JSON.stringify(json).slice(0, 500)}`);
  return { successful: json.entity?.successful ?? 0, failed: json.entity?.failed ?? 0 };
}

function progressBar(enabled) {
  if (!enabled) return { start() {}, increment() {}, stop() {} };
  const cliProgress = require('cli-progress');
  return new cliProgress.SingleBar(
    { format: '  {phase} |{bar}| {percentage}% {value}/{total} · {rate}/s · eta {eta_formatted}', barsize: 30, hideCursor: true, etaBuffer: 50 },
    cliProgress.Presets.shades_classic,
  );
}

/**
 * Seeds (or resumes). `state` is read from and written to `stateFile` after every batch, so a
 * run cut off at any point continues where it stopped; raising --contacts or --events on a
 * later run adds the difference.
 */
async function seed({ contacts, events, sources, concurrency = 8, stateFile, progress = true, log = console.log, env = process.env }) {
  const client = adminClient(env);
  const base = client.base;
  let state = fs.existsSync(stateFile) ? JSON.parse(fs.readFileSync(stateFile, 'utf8')) : null;
  if (state && state.gateway !== base) throw new Error(`${stateFile} was made for ${state.gateway}, not ${base}: pass another --state`);
  if (!state) {
    const tenant = await createTenant(client, sources);
    state = { gateway: base, ...tenant, contactsDone: 0, eventsDone: 0, now: Date.now(), accepted: { contacts: 0, events: 0 }, failed: { contacts: 0, events: 0 } };
  } else if (sources > state.sources.length) {
    state.sources.push(...(await addSources(client, state.projectUid, sources, state.sources.length)));
  }
  sources = state.sources.length;
  await declareCatalogue(client, state.projectUid);
  const save = () => {
    fs.mkdirSync(path.dirname(stateFile), { recursive: true });
    fs.writeFileSync(stateFile, `${JSON.stringify(state, null, 2)}\n`);
  };
  save();
  log(`seeding project ${state.projectUid} on ${base} (${sources} data sources; state in ${path.relative(process.cwd(), stateFile)})`);
  const stream = (ds, kind) => `${base}/v1/project/${state.projectUid}/datasource/${ds.id}/stream/${kind}`;
  const started = Date.now();

  const phase = async (name, target, doneKey, batchFor) => {
    if (state[doneKey] >= target) return;
    const bar = progressBar(progress);
    bar.start(target, state[doneKey], { phase: name.padEnd(8), rate: 0 });
    const t0 = Date.now();
    let sent = 0;
    await pump({
      from: state[doneKey],
      to: target,
      concurrency,
      send: async (start, end) => {
        const bySource = batchFor(start, end);
        const outcomes = await Promise.all([...bySource.entries()].map(([k, items]) => post(stream(state.sources[k], name), state.sources[k].token, items)));
        return outcomes.reduce((a, o) => ({ successful: a.successful + o.successful, failed: a.failed + o.failed }), { successful: 0, failed: 0 });
      },
      onProgress: (n, outcome) => {
        sent += n;
        state.accepted[name] += outcome.successful;
        state.failed[name] += outcome.failed;
        bar.increment(n, { rate: Math.round(sent / Math.max(0.001, (Date.now() - t0) / 1000)) });
      },
      onDone: (upTo) => {
        state[doneKey] = upTo;
        save();
      },
    });
    bar.stop();
  };

  await phase('contacts', contacts, 'contactsDone', (start, end) => {
    const bySource = new Map();
    for (let i = start; i < end; i++) {
      sourcesOf(i, sources).forEach((k, n) => {
        if (!bySource.has(k)) bySource.set(k, []);
        bySource.get(k).push(contact(i, k, n === 0));
      });
    }
    return bySource;
  });
  const population = Math.max(1, Math.max(contacts, state.contactsDone));
  await phase('events', events, 'eventsDone', (start, end) => {
    const bySource = new Map();
    for (let j = start; j < end; j++) {
      const { source, item } = event(j, population, sources, state.now);
      if (!bySource.has(source)) bySource.set(source, []);
      bySource.get(source).push(item);
    }
    return bySource;
  });
  const seconds = (Date.now() - started) / 1000;
  const summary = {
    project: state.projectUid,
    organization: state.organizationId,
    dataSources: state.sources.map((s) => s.id),
    contacts: { target: contacts, done: state.contactsDone, ...pair(state, 'contacts') },
    events: { target: events, done: state.eventsDone, ...pair(state, 'events') },
    seconds: Math.round(seconds * 10) / 10,
    stateFile,
  };
  return summary;
}
const pair = (state, k) => ({ accepted: state.accepted[k], failed: state.failed[k] });

module.exports = { seed };
