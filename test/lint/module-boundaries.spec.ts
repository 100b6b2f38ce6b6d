import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '../..');
const eslintBin = join(root, 'node_modules/.bin/eslint');

// Proves the boundary rule is live (it skips itself silently when Nx has no project graph).
// ESLint runs as a child process: its flat config is ESM, which Jest's VM cannot import.
function boundaryErrors(file: string, code: string): unknown[] {
  const res = spawnSync(eslintBin, ['--stdin', '--stdin-filename', file, '--format', 'json'], { cwd: root, input: code, encoding: 'utf8' });
  const [result] = JSON.parse(res.stdout) as { messages: { ruleId: string }[] }[];
  return result.messages.filter((m) => m.ruleId === '@nx/enforce-module-boundaries');
}

describe('Nx module boundaries', () => {
  beforeAll(() => execFileSync('npx', ['nx', 'show', 'projects'], { cwd: root, stdio: 'ignore' }));

  it('refuses an app importing another app', () => {
    const code = "import { appDefinition } from '../../gateway/src/app.definition';\nexport const x = appDefinition;\n";
    expect(boundaryErrors('apps/ingest/src/x.ts', code)).toHaveLength(1);
  });

  it('lets an app import a lib through its package name', () => {
    expect(boundaryErrors('apps/ingest/src/x.ts', "import { APPS } from '@meld/contracts';\nexport const x = APPS;\n")).toEqual([]);
  });
});
