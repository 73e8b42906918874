/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] },
  testMatch: ['<rootDir>/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/data/', '/dist/'],
  // Starting PGlite (a WASM PostgreSQL) takes seconds, and far longer when both cores are busy.
  testTimeout: 60000,
  // Integration tests start real servers and databases; two workers match the machine's two cores.
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  // A Redis and a PostgreSQL for the whole run: the machine's own, or private ones started when those do not answer.
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};
