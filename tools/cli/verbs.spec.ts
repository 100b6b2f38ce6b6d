import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

// Issue 19 item 4: `--help` on every verb prints that verb's help and does nothing else
// (`meld start --help` starts nothing), and an unknown flag is an error naming it.
const MELD = join(__dirname, 'meld.js');
const meld = (args: string[]) => {
  const res = spawnSync(process.execPath, [MELD, ...args], { encoding: 'utf8', timeout: 20000, env: { ...process.env, MELD_GATEWAY_URL: 'http://127.0.0.1:9' } });
  return { code: res.status, out: `${res.stdout}${res.stderr}` };
};

const VERBS = ['start', 'test', 'stack', 'migrate', 'topics', 'smsc', 'bench', 'admin', 'bootstrap', 'seed', 'doctor', 'keys', 'dlq'];

describe('meld verbs', () => {
  it.each(VERBS)('%s --help prints its help and does nothing else', (verb) => {
    const started = Date.now();
    const { code, out } = meld([verb, '--help']);
    expect([code, out.split('\n')[0]]).toEqual([0, expect.stringMatching(new RegExp(`^usage: meld ${verb}\\b`))]);
    // Nothing ran: no install, build, stack or network step prints its "▸" line.
    expect(out).not.toContain('▸');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it.each(VERBS.filter((v) => !['bench', 'smsc'].includes(v)))('%s refuses an unknown flag, naming it', (verb) => {
    const { code, out } = meld([verb, '--no-such-flag']);
    expect(code).toBe(2);
    expect(out).toMatch(/unknown option ['"]--no-such-flag['"]/i);
    expect(out).toContain(`usage: meld ${verb}`);
  });

  it.each(['constructor', '__proto__', 'hasOwnProperty'])('%s is an unknown command, verb or service, not an Object member (ADR 0124)', (name) => {
    expect(meld([name])).toEqual({ code: 2, out: expect.stringContaining(`meld: unknown command "${name}"`) });
    expect(meld(['admin', name, 'organizations'])).toEqual({ code: 2, out: expect.stringContaining(`meld admin: unknown verb "${name}"`) });
    expect(meld(['stack', 'down', name])).toMatchObject({ out: expect.stringContaining(`unknown service "${name}"`) });
  });

  it('the list of verbs is every command meld knows', () => {
    const { out } = meld(['--help']);
    for (const verb of VERBS) expect(out).toMatch(new RegExp(`^  ${verb}\\b`, 'm'));
  });
});

describe('meld bootstrap', () => {
  it.each([
    [['--plan'], '--plan'],
    [['--json', '--name'], '--name'],
    [['--name', '--json'], '--name'],
    [['--project'], '--project'],
  ])('%j is an error naming the option without its value, before any call (exit 2)', (args, option) => {
    const { code, out } = meld(['bootstrap', ...args]);
    expect(code).toBe(2);
    expect(out).toMatch(new RegExp(`^meld bootstrap: .*'${option}`, 'm'));
    expect(out).not.toContain('cannot reach the gateway');
  });
});

describe('meld seed', () => {
  it.each([
    ['--contacts', 'abc'],
    ['--events', '-5'],
    ['--sources', '0'],
    ['--max-ahead', '10'],
  ])('%s %s is a usage error naming the option, with the help (exit 2, as a flag without its value)', (option, value) => {
    const { code, out } = meld(['seed', `${option}=${value}`]);
    expect(code).toBe(2);
    expect(out).toMatch(new RegExp(`^meld seed: ${option} must be a whole number ≥ \\d+ \\(got "${value}"\\)`, 'm'));
    expect(out).toContain('usage: meld seed');
  });
});

describe('meld admin --data', () => {
  it.each([
    [['post', 'organizations', '--data'], /^meld admin: --data needs a value/m],
    [['get', 'scopes', '--data', '{}'], /^meld admin: --data goes with post, put, patch or delete, not get/m],
    [['post', 'organizations', '--data', '{"name":'], /^meld admin: --data is not JSON/m],
  ])('%j is a usage error naming --data, before any call (exit 2)', (args, message) => {
    const { code, out } = meld(['admin', ...args]);
    expect(code).toBe(2);
    expect(out).toMatch(message);
    expect(out).not.toContain('cannot reach the gateway');
  });
});

describe('meld stack', () => {
  it.each([
    [['up', 'postgres', 'mysql'], 'meld stack: unknown service "mysql" (known: postgres, redis, clickhouse, kafka, smsc)'],
    [['down', 'mysql'], 'meld stack: unknown service "mysql" (known: postgres, redis, clickhouse, kafka, smsc)'],
    [['status', 'postgres'], 'meld stack: status takes no service (it lists them all)'],
  ])('%j is a usage error naming the argument, before anything starts or stops (exit 2)', (args, message) => {
    const { code, out } = meld(['stack', ...args]);
    expect(code).toBe(2);
    expect(out).toContain(message);
    expect(out).toContain('usage: meld stack');
  });
});
