// One Jest run for unit (*.spec.ts), integration (*.integration-spec.ts) and e2e
// (*.e2e-spec.ts) tests. `meld test` brings the local stack up and exports the
// MELD_* test URLs before Jest starts, so integration tests talk to real stores.
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'commonjs' },
};

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/tools', '<rootDir>/test', '<rootDir>/bench'],
  testMatch: ['**/*.spec.ts', '**/*.integration-spec.ts', '**/*.e2e-spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  // NestJS 12 ships ES modules; Node 20 `require`s them natively but Jest's module
  // runtime cannot (before Node 24.9), so Jest compiles those packages to CommonJS.
  transform: { '^.+\\.ts$': ['@swc/jest', swc], '^.+\\.m?js$': ['@swc/jest', { ...swc, jsc: { ...swc.jsc, parser: { syntax: 'ecmascript' } } }] },
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs|file-type|strtok3|token-types|peek-readable|uint8array-extras|@tokenizer)/)'],
  moduleNameMapper: { '^@meld/([a-z-]+)$': '<rootDir>/libs/$1/src' },
  setupFiles: ['reflect-metadata', '<rootDir>/test/setup/fast-check.ts', '<rootDir>/test/setup/local-stack.ts'],
  testTimeout: 60000,
};
