import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '../..');
const eslintBin = join(root, 'node_modules/.bin/eslint');

// Proves the boundary rules are live (the Nx rule skips itself silently when Nx has no project graph).
// ESLint runs as a child process: its flat config is ESM, which Jest's VM cannot import.
function lintErrors(file: string, code: string, ruleId: string): unknown[] {
  const res = spawnSync(eslintBin, ['--stdin', '--stdin-filename', file, '--format', 'json'], { cwd: root, input: code, encoding: 'utf8' });
  const [result] = JSON.parse(res.stdout) as { messages: { ruleId: string }[] }[];
  return result.messages.filter((m) => m.ruleId === ruleId);
}
const boundaryErrors = (file: string, code: string) => lintErrors(file, code, '@nx/enforce-module-boundaries');

const FIXTURES = "import { seedTenancy } from '@meld/fixtures';\nexport const x = seedTenancy;\n";
const TESTING = "import { waitFor } from '@meld/testing';\nexport const x = waitFor;\n";

describe('Nx module boundaries', () => {
  beforeAll(() => execFileSync('npx', ['nx', 'show', 'projects'], { cwd: root, stdio: 'ignore' }));

  it('refuses an app importing another app', () => {
    const code = "import { appDefinition } from '../../gateway/src/app.definition';\nexport const x = appDefinition;\n";
    expect(boundaryErrors('apps/ingest/src/x.ts', code)).toHaveLength(1);
  });

  it('lets an app import a lib through its package name', () => {
    expect(boundaryErrors('apps/ingest/src/x.ts', "import { APPS } from '@meld/contracts';\nexport const x = APPS;\n")).toEqual([]);
  });

  it('refuses production code importing a test-only lib (ADR 0228), in an app or a lib', () => {
    expect(boundaryErrors('apps/ingest/src/events/x.ts', FIXTURES)).toHaveLength(1);
    expect(boundaryErrors('apps/audience/src/x.ts', TESTING)).toHaveLength(1);
    expect(boundaryErrors('libs/db/src/x.ts', TESTING)).toHaveLength(1);
  });

  it('lets specs, test folders and the test libs themselves import the test-only libs', () => {
    expect(boundaryErrors('apps/ingest/src/events/x.spec.ts', FIXTURES)).toEqual([]);
    expect(boundaryErrors('apps/ingest/test/x.integration-spec.ts', FIXTURES)).toEqual([]);
    expect(boundaryErrors('apps/ingest/test/app.fixture.ts', TESTING)).toEqual([]);
    expect(boundaryErrors('libs/fixtures/src/x.ts', TESTING)).toEqual([]);
  });
});

describe('the bench', () => {
  it('refuses an import of app code (ADR 0228)', () => {
    const code = "import { toEventRow } from '../../apps/probes/src/sinks/events.sink';\nexport const x = toEventRow;\n";
    expect(lintErrors('bench/scenarios/x.ts', code, 'no-restricted-imports')).toHaveLength(1);
    expect(lintErrors('bench/scenarios/x.ts', "import { toEventRow } from '@meld/clickhouse';\nexport const x = toEventRow;\n", 'no-restricted-imports')).toEqual([]);
  });
});
