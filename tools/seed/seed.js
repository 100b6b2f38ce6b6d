'use strict';
// `meld seed`: fills a project with realistic contacts and events through the public ingest
// API of the running gateway (the same path a customer's integration takes), with a live
// progress bar, resumable from a state file, and a summary at the end. It never runs further
// ahead of what the product API says arrived than --max-ahead, and succeeds only once every
// person written is merged and every event stored (ADR 0241).
const fs = require('node:fs');
const path = require('node:path');
const { adminClient, expectOk } = require('../cli/commands/admin');
const { contact, event, sourcesOf, EVENT_TYPES, ATTRIBUTES } = require('./generator');
const { arrivals } = require('./arrivals');
const { postJson } = require('./http');
const { pacer, settle } = require('./pacing');
const { shortfall, stalledError } = require('./shortfall');

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
  let failed = false;
  const worker = async () => {
    while (next < to && !failed) {
      const start = next;
      const end = Math.min(to, start + BATCH);
      next = end;
      const outcome = await send(start, end).catch((err) => {
        failed = true;
        throw err;
      });
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

/** One ingest batch: its counts of accepted and refused items (a 422 refuses some or all of them). */
async function post(url, token, body) {
  const { status, json } = await postJson(url, token, body);
  if (status !== 202 && status !== 422) throw new Error(`${url} answered ${status}: ${JSON.stringify(json).slice(0, 500)}`);
  return { successful: json.entity?.successful ?? 0, failed: json.entity?.failed ?? 0 };
}

function progressBar(enabled, stream = process.stderr) {
  if (!enabled) return { start() {}, increment() {}, update() {}, stop() {} };
  const cliProgress = require('cli-progress');
  return new cliProgress.SingleBar(
    {
      format: '  {phase} |{bar}| {percentage}% {value}/{total} · {rate}/s · eta {eta_formatted}{note}',
      barsize: 30,
      hideCursor: true,
      etaBuffer: 50,
      stream,
      // Where the output is not a terminal (a pipe, a CI log) the bar is a line every 10 s, not nothing.
      noTTYOutput: true,
      notTTYSchedule: 10000,
    },
    cliProgress.Presets.shades_classic,
  );
}

/**
 * Seeds (or resumes). `state` is read from and written to `stateFile` after every batch, so a
 * run cut off at any point continues where it stopped; raising --contacts or --events on a
 * later run adds the difference.
 */
async function seed({ contacts, events, sources, concurrency = 8, maxAhead = 20000, stallSeconds = 120, stateFile, progress = true, log = console.log, env = process.env }) {
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
  const arrived = await arrivals(client, state);
  try {
    const stallMs = stallSeconds * 1000;
    // Events are read less often: their count scans the event store (ADR 0242).
    const paces = {
      contacts: pacer({ read: arrived.people, maxAhead, readEveryMs: 1000, stallMs, stalled: stalledError('people', stallSeconds) }),
      events: pacer({ read: arrived.events, maxAhead, readEveryMs: 3000, stallMs, stalled: stalledError('events', stallSeconds) }),
    };
    const label = { contacts: 'merged', events: 'stored' };

    const phase = async (name, target, doneKey, batchFor) => {
      if (state[doneKey] >= target) return;
      const bar = progressBar(progress);
      bar.start(target, state[doneKey], { phase: name.padEnd(8), rate: 0, note: '' });
      const waiting = (ahead) => bar.update({ note: ahead > 0 ? ` · waiting: ${ahead.toLocaleString('en')} ahead of ${label[name]} (--max-ahead ${maxAhead})` : '' });
      const t0 = Date.now();
      let sent = 0;
      await pump({
        from: state[doneKey],
        to: target,
        concurrency,
        send: async (start, end) => {
          await paces[name].before(end, waiting);
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

    /** Waits (bounded by --stall-seconds without progress) until `expected` arrived; the count reached. */
    const arrival = async (phaseName, read, expected) => {
      const bar = progressBar(progress);
      bar.start(expected, 0, { phase: phaseName.padEnd(8), rate: 0, note: '' });
      const reached = await settle({ read, expected, stallMs, onRead: (n) => bar.update(Math.min(n, expected)) });
      bar.stop();
      return reached;
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
    // Every person written is merged before events are sent: the event count reaches events through merged contacts.
    const merged = await arrival('merging', arrived.people, state.contactsDone);
    // People missing make the event count unreachable too (and events would only add to the backlog).
    const eventsTarget = merged < state.contactsDone ? state.eventsDone : events;
    const population = Math.max(1, Math.max(contacts, state.contactsDone));
    await phase('events', eventsTarget, 'eventsDone', (start, end) => {
      const bySource = new Map();
      for (let j = start; j < end; j++) {
        const { source, item } = event(j, population, sources, state.now);
        if (!bySource.has(source)) bySource.set(source, []);
        bySource.get(source).push(item);
      }
      return bySource;
    });
    const eventsStored = merged < state.contactsDone ? null : await arrival('storing', arrived.events, state.eventsDone);
    const seconds = (Date.now() - started) / 1000;
    return {
      project: state.projectUid,
      organization: state.organizationId,
      dataSources: state.sources.map((s) => s.id),
      contacts: { target: contacts, done: state.contactsDone, ...pair(state, 'contacts') },
      events: { target: events, done: state.eventsDone, ...pair(state, 'events') },
      merged,
      eventsStored,
      missing: [
        ...(merged < state.contactsDone ? [shortfall('people', merged, state.contactsDone, stallSeconds)] : []),
        ...(eventsStored !== null && eventsStored < state.eventsDone ? [shortfall('events', eventsStored, state.eventsDone, stallSeconds)] : []),
      ],
      seconds: Math.round(seconds * 10) / 10,
      stateFile,
    };
  } finally {
    // The run's read token never outlives it (arrivals.js).
    await arrived.close();
  }
}
const pair = (state, k) => ({ accepted: state.accepted[k], failed: state.failed[k] });

module.exports = { seed, progressBar };
