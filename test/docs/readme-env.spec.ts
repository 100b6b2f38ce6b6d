import { principalKeyEnv } from '@meld/auth';
import { INTERNAL_APPS, appUrlEnv } from '@meld/contracts';
import { filesUnder, markdownSection, readRepoFile } from './repo-files';

// The README's configuration table against the variables the code reads, so neither can
// drift from the other (ADR 0095).

const VARIABLE = /\b(?:MELD_[A-Z0-9_]+|PORT|LOG_LEVEL)\b/g;
const APP_URL_PLACEHOLDER = 'MELD_<APP>_URL';
/** Each internal app reads its own principal key, `MELD_PRINCIPAL_KEY_` + its name (ADR 0256). */
const PRINCIPAL_KEY_PLACEHOLDER = 'MELD_PRINCIPAL_KEY_<APP>';
/** Test-only libraries: what they read configures tests, not apps. */
const TEST_LIBS = new Set(['libs/testing', 'libs/fixtures']);
const isSource = (name: string): boolean => /\.(ts|js|mjs)$/.test(name) && !/\.(spec|integration-spec|e2e-spec)\.ts$/.test(name);

/** The image recipe and the deploy manifests: they set variables the apps read, and the image's HEALTHCHECK reads some. */
const DEPLOY_FILES = (): string[] => ['Dockerfile', 'docker-compose.yml', ...filesUnder('k8s', (name) => /\.ya?ml$/.test(name))];

/** Variables named in the production sources of apps and libs (their `src/`, tests excluded). */
function variablesReadByApps(): Set<string> {
  const dirs = [...projectDirs('apps'), ...projectDirs('libs')];
  const names = new Set<string>();
  for (const dir of dirs.filter((d) => !TEST_LIBS.has(d))) {
    for (const file of filesUnder(`${dir}/src`, isSource)) {
      for (const match of readRepoFile(file).matchAll(VARIABLE)) names.add(match[0]);
    }
  }
  for (const app of INTERNAL_APPS) names.delete(appUrlEnv(app)); // documented as MELD_<APP>_URL
  if (names.delete('MELD_PRINCIPAL_KEY_')) names.add(PRINCIPAL_KEY_PLACEHOLDER); // principalKeyEnv(app)
  return names;
}

/** Nx project folders under `top` (those with a project.json). */
function projectDirs(top: string): string[] {
  return filesUnder(top, (name) => name === 'project.json').map((file) => file.slice(0, -'/project.json'.length));
}

/** Variables the README's configuration table lists (first column, every code span). */
function variablesInReadme(): Set<string> {
  const rows = markdownSection(readRepoFile('README.md'), 'Configuration').filter((line) => line.startsWith('| `'));
  const names = new Set<string>();
  for (const row of rows) {
    const firstCell = row.split('|')[1];
    for (const span of firstCell.matchAll(/`([^`]+)`/g)) names.add(span[1]);
  }
  return names;
}

describe('README configuration table', () => {
  const documented = variablesInReadme();

  it('lists every variable the apps and libs read', () => {
    const missing = [...variablesReadByApps()].filter((name) => !documented.has(name)).sort();
    expect(missing).toEqual([]);
  });

  it('lists every variable the tools read (the CLI, the local stack, the image scripts)', () => {
    const names = new Set<string>();
    for (const file of filesUnder('tools', isSource)) for (const match of readRepoFile(file).matchAll(VARIABLE)) names.add(match[0]);
    if (names.delete('MELD_PRINCIPAL_KEY_')) names.add(PRINCIPAL_KEY_PLACEHOLDER);
    for (const app of INTERNAL_APPS) names.delete(appUrlEnv(app));
    expect([...names].filter((name) => !documented.has(name)).sort()).toEqual([]);
  });

  it('lists every variable the image and the deploy manifests name (Dockerfile, docker-compose.yml, k8s/)', () => {
    // The image's HEALTHCHECK read MELD_HEALTH_PATH, which the table did not list.
    const names = new Set<string>();
    for (const file of DEPLOY_FILES()) for (const match of readRepoFile(file).matchAll(VARIABLE)) names.add(match[0]);
    // Manifests set each app's own names (MELD_PRINCIPAL_KEY_OAUTH, MELD_OAUTH_URL); comments write the placeholders.
    for (const app of INTERNAL_APPS) {
      names.delete(appUrlEnv(app));
      if (names.delete(principalKeyEnv(app))) names.add(PRINCIPAL_KEY_PLACEHOLDER);
    }
    if (names.delete('MELD_PRINCIPAL_KEY_')) names.add(PRINCIPAL_KEY_PLACEHOLDER);
    names.delete('MELD_'); // MELD_<APP>_URL in a comment
    expect([...names].filter((name) => !documented.has(name)).sort()).toEqual([]);
  });

  it('lists only variables something reads (apps, libs, the local stack tools or the image)', () => {
    const sources = [...filesUnder('apps', isSource), ...filesUnder('libs', isSource), ...filesUnder('tools', isSource), 'Dockerfile']
      .filter((file) => ![...TEST_LIBS].some((lib) => file.startsWith(`${lib}/`)))
      .map(readRepoFile)
      .join('\n');
    const unread = [...documented].filter((name) => name !== APP_URL_PLACEHOLDER && name !== PRINCIPAL_KEY_PLACEHOLDER && !new RegExp(`\\b${name}\\b`).test(sources));
    expect(unread).toEqual([]);
  });

  it('documents MELD_<APP>_URL, which the gateway reads for every internal app', () => {
    expect(documented.has(APP_URL_PLACEHOLDER)).toBe(true);
    const gatewaySources = filesUnder('apps/gateway/src', isSource).map(readRepoFile).join('\n');
    expect(gatewaySources).toMatch(/appUrlEnv\(/);
  });
});
