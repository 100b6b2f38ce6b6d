'use strict';
// `meld seed --contacts N --events N [--sources K]`: realistic sample data through the public
// ingest API of the running gateway (tools/seed). Resumable: run it again to continue.
const path = require('node:path');
const { parseVerbArgs, UsageError } = require('../args');
const { root } = require('../lib');

const HELP = [
  'usage: meld seed [--contacts N] [--events N] [--sources K] [--concurrency C] [--max-ahead N] [--stall-seconds S]',
  '                 [--state FILE] [--new] [--json] [--no-progress]',
  '  fills a project of the running gateway (npm start) through the public ingest API:',
  '  contacts with names, UK and other mobiles, emails, consent, skewed attributes; events of five',
  '  types with parameters; K data sources whose contacts overlap (30% are in two) and merge.',
  '  --contacts N     contacts to reach (default 10000)',
  '  --events N       events to reach (default 100000)',
  '  --sources K      data sources (default 2)',
  '  --concurrency C  requests in flight (default 8)',
  '  --max-ahead N    written but not yet arrived: at most N people not yet merged, N events not yet stored',
  '                   (default 20000); the seed waits for the audience count (the dev broker drops a backlog',
  '                   past 5 MB per partition, ADR 0092), then waits until everything written arrived',
  '  --stall-seconds S  give up a wait after S seconds without progress (default 120): exit 1 naming what is missing',
  '  --state FILE     progress file (default .stack/seed/state.json): an interrupted seed resumes from it,',
  '                   and a later run with larger numbers adds the difference to the same project',
  '  --new            start a new project even if the state file exists',
  '  --json           print the summary as JSON',
  '  env: MELD_GATEWAY_URL or MELD_PORT, MELD_ADMIN_TOKEN (as `meld admin`)',
].join('\n');

const OPTIONS = {
  contacts: { type: 'string', default: '10000' },
  events: { type: 'string', default: '100000' },
  sources: { type: 'string', default: '2' },
  concurrency: { type: 'string', default: '8' },
  'max-ahead': { type: 'string', default: '20000' },
  'stall-seconds': { type: 'string', default: '120' },
  state: { type: 'string', default: path.join(root, '.stack', 'seed', 'state.json') },
  new: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
  'no-progress': { type: 'boolean', default: false },
};

function count(name, value, min) {
  if (!/^\d+$/.test(value) || Number(value) < min) throw new UsageError(`meld seed: --${name} must be a whole number ≥ ${min} (got "${value}")`);
  return Number(value);
}

async function run(args) {
  const { values } = parseVerbArgs('seed', args, { options: OPTIONS });
  const options = {
    contacts: count('contacts', values.contacts, 0),
    events: count('events', values.events, 0),
    sources: count('sources', values.sources, 1),
    concurrency: count('concurrency', values.concurrency, 1),
    // Below one batch of 100 a send could never be within reach (ADR 0241).
    maxAhead: count('max-ahead', values['max-ahead'], 100),
    stallSeconds: count('stall-seconds', values['stall-seconds'], 1),
    stateFile: path.resolve(values.state),
    progress: !values['no-progress'] && !values.json && process.stdout.isTTY !== false,
  };
  if (values.new) require('node:fs').rmSync(options.stateFile, { force: true });
  const summary = await require('../../seed/seed').seed({ ...options, log: values.json ? () => undefined : console.log });
  // What is missing is said last to a person, and before the JSON (found by its first brace) to a machine.
  const warn = () => summary.missing.forEach((message) => console.error(message));
  if (values.json) {
    warn();
    console.log(JSON.stringify(summary, null, 2));
  } else {
    console.log(
      [
        '',
        `project      ${summary.project}  (organization ${summary.organization})`,
        `contacts     ${summary.contacts.done.toLocaleString('en')} sent, ${summary.contacts.accepted.toLocaleString('en')} accepted, ${summary.contacts.failed} refused`,
        `events       ${summary.events.done.toLocaleString('en')} sent, ${summary.events.accepted.toLocaleString('en')} accepted, ${summary.events.failed} refused`,
        `merged       ${summary.merged.toLocaleString('en')} people in the audience`,
        `eventsStored ${summary.eventsStored === null ? 'not read (people are missing)' : `${summary.eventsStored.toLocaleString('en')} events in the event store`}`,
        `time         ${summary.seconds} s  (${Math.round((summary.contacts.done + summary.events.done) / Math.max(summary.seconds, 0.001)).toLocaleString('en')} items/s this run)`,
        `state        ${path.relative(process.cwd(), summary.stateFile)} (run again to resume or extend; --new for a new project)`,
      ].join('\n'),
    );
    warn();
  }
  return summary.contacts.failed + summary.events.failed > 0 || summary.missing.length > 0 ? 1 : 0;
}

module.exports = { run, help: HELP };
