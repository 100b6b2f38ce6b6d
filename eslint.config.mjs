import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

/** Test code: specs, everything under a `test/` folder (fixtures of an app, the e2e suites). */
const TEST_FILES = ['**/*.spec.ts', '**/*.integration-spec.ts', '**/*.e2e-spec.ts', '**/test/**/*.ts'];

/**
 * The module-boundary rule. Tags are per project, and a project's specs sit beside its code, so
 * what production code may import is set here per file: `type:test-lib` (libs/testing,
 * libs/fixtures) only for TEST_FILES and for the test libs themselves.
 */
const boundaries = (forTests) => [
  'error',
  {
    allow: [],
    // libs/testing's migrated test ClickHouse uses the client, and libs/clickhouse's own specs use
    // libs/testing's env guard: a cycle through test code only (nothing built depends on it).
    ignoredCircularDependencies: [['clickhouse', 'testing']],
    depConstraints: [
      { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib', ...forTests] },
      { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib', ...forTests] },
      { sourceTag: 'type:test-lib', onlyDependOnLibsWithTags: ['type:lib', 'type:test-lib'] },
    ],
  },
];

export default [
  { ignores: ['**/dist/**', 'node_modules/**', '.stack/**', '.nx/**', 'coverage/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      // Apps import libs only, never another app; libs never import apps; production code never
      // imports the test-only libs (ADR 0228).
      '@nx/enforce-module-boundaries': boundaries([]),
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-unsafe-function-type': 'off',
    },
  },
  {
    files: TEST_FILES,
    rules: { '@nx/enforce-module-boundaries': boundaries(['type:test-lib']) },
  },
  {
    // Loaded on demand, never at boot (ADR 0355): the OpenAPI document builder and the tracing SDK
    // cost ~0.5 s of CPU per process and per Jest file that would otherwise load them. Controllers
    // take their OpenAPI decorators from @meld/api; type imports cost nothing.
    files: ['apps/*/src/**/*.ts', 'libs/*/src/**/*.ts'],
    ignores: TEST_FILES,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            { name: '@nestjs/swagger', allowTypeImports: true, message: 'take the decorators from @meld/api (libs/api/src/openapi-decorators.ts); only openapi-document.ts loads the package, on demand' },
            ...['sdk-trace-base', 'exporter-trace-otlp-http', 'resources', 'core'].map((p) => ({ name: `@opentelemetry/${p}`, allowTypeImports: true, message: 'the OTel SDK loads in startTracing, only for a process that exports' })),
          ],
        },
      ],
    },
  },
  {
    // The bench measures the apps as a client does: through their APIs and the libs, never by
    // importing an app's source (ADR 0228).
    files: ['bench/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/apps/*/**', '**/apps/*'], message: 'the bench imports libs (@meld/*), never app code' }] }] },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', process: 'readonly', console: 'readonly', __dirname: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off', '@typescript-eslint/no-unused-vars': ['error', { caughtErrors: 'none' }] },
  },
];
