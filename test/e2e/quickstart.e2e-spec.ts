import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { quickstartBlocks, quickstartScript } from '../docs/quickstart-blocks';
import { readRepoFile } from '../docs/repo-files';
import { SHARED_BASE, SHARED_GATEWAY_PORT, sharedSystem } from './support/shared-system';

// The README's quickstart as a newcomer runs it: its marked shell blocks, in order, with bash,
// in the repository root, against the eight apps as processes (the shared e2e system, ADR 0352).
const ROOT = join(__dirname, '../..');

const GATEWAY_PORT = SHARED_GATEWAY_PORT;
const BASE = SHARED_BASE;
/** What the README says the last step prints. */
const FINAL_COUNT = '{"metadata":{"totalHits":1}}';

function bash(script: string): Promise<{ code: number; out: string; err: string }> {
  const child = spawn('bash', ['-c', script], { cwd: ROOT, env: { ...process.env, MELD_GATEWAY_URL: BASE, MELD_PORT: String(GATEWAY_PORT) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code: code ?? -1, out, err })));
}

describe('the README quickstart works as written', () => {
  beforeAll(() => sharedSystem(), 180000);

  it('every block exits 0 and the filtered count is the one the README shows', async () => {
    const readme = readRepoFile('README.md');
    expect(readme).toContain(`It prints \`${FINAL_COUNT}\``);
    const blocks = quickstartBlocks(readme);
    const run = await bash(quickstartScript(blocks));
    const done = run.out.split('\n').filter((line) => line.startsWith('::quickstart block'));
    // On a failure, the blocks that finished and bash's stderr say which command broke.
    expect({ code: run.code, done, err: run.code === 0 ? '' : run.err }).toEqual({ code: 0, done: blocks.map((_, i) => `::quickstart block ${i + 1} done`), err: '' });
    const printed = run.out.split('\n').filter((line) => line && !line.startsWith('::'));
    expect(printed[printed.length - 1]).toBe(FINAL_COUNT);
  }, 180000);
});
