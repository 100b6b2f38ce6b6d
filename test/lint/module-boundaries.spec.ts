import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '../..');
const script = join(__dirname, 'lint-snippets.mjs');

// Proves the boundary rules are live (the Nx rule skips itself silently when Nx has no project graph).
// Every snippet is linted by one ESLint child process (lint-snippets.mjs): its flat config is ESM,
// which Jest's VM cannot import, and one process pays ESLint's start-up once.
type Snippet = { file: string; code: string };
type Message = { ruleId: string | null; message: string };
function lintAll(snippets: Snippet[]): Message[][] {
  const res = spawnSync(process.execPath, [script], { cwd: root, input: JSON.stringify(snippets), encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`lint-snippets failed: ${res.stderr}`);
  return JSON.parse(res.stdout) as Message[][];
}

const FIXTURES = "import { seedTenancy } from '@meld/fixtures';\nexport const x = seedTenancy;\n";
const TESTING = "import { waitFor } from '@meld/testing';\nexport const x = waitFor;\n";
const OTHER_APP = "import { appDefinition } from '../../gateway/src/app.definition';\nexport const x = appDefinition;\n";
const BOUNDARY = '@nx/enforce-module-boundaries';

/** Each snippet, the rule asked about, and how many errors of it the file must get. */
const cases: Array<Snippet & { rule: string; errors: number }> = [
  // an app importing another app
  { file: 'apps/ingest/src/x.ts', code: OTHER_APP, rule: BOUNDARY, errors: 1 },
  // an app importing a lib through its package name
  { file: 'apps/ingest/src/x.ts', code: "import { APPS } from '@meld/contracts';\nexport const x = APPS;\n", rule: BOUNDARY, errors: 0 },
  // production code importing a test-only lib (ADR 0228), in an app or a lib
  { file: 'apps/ingest/src/events/x.ts', code: FIXTURES, rule: BOUNDARY, errors: 1 },
  { file: 'apps/audience/src/x.ts', code: TESTING, rule: BOUNDARY, errors: 1 },
  { file: 'libs/db/src/x.ts', code: TESTING, rule: BOUNDARY, errors: 1 },
  // specs, test folders and the test libs themselves importing the test-only libs
  { file: 'apps/ingest/src/events/x.spec.ts', code: FIXTURES, rule: BOUNDARY, errors: 0 },
  { file: 'apps/ingest/test/x.integration-spec.ts', code: FIXTURES, rule: BOUNDARY, errors: 0 },
  { file: 'apps/ingest/test/app.fixture.ts', code: TESTING, rule: BOUNDARY, errors: 0 },
  { file: 'libs/fixtures/src/x.ts', code: TESTING, rule: BOUNDARY, errors: 0 },
  // the bench importing app code (ADR 0228), or a lib
  { file: 'bench/scenarios/x.ts', code: "import { toEventRow } from '../../apps/probes/src/sinks/events.sink';\nexport const x = toEventRow;\n", rule: 'no-restricted-imports', errors: 1 },
  { file: 'bench/scenarios/x.ts', code: "import { toEventRow } from '@meld/clickhouse';\nexport const x = toEventRow;\n", rule: 'no-restricted-imports', errors: 0 },
];

describe('Nx module boundaries and the bench import rule', () => {
  let results: Message[][];
  beforeAll(() => {
    // The boundary rule needs a cached project graph.
    execFileSync('npx', ['nx', 'show', 'projects'], { cwd: root, stdio: 'ignore' });
    results = lintAll(cases);
  }, 60_000);

  it.each(cases.map((c, i) => [c.file, c.code.split('\n')[0], c.errors, i] as const))('%s: `%s` gets %i error(s) of its rule', (_file, _line, errors, i) => {
    expect(results[i].filter((m) => m.ruleId === cases[i].rule)).toHaveLength(errors);
  });

  it('lints each snippet (no parse errors)', () => {
    expect(results.flat().filter((m) => m.ruleId === null)).toEqual([]);
  });
});
