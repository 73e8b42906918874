/**
 * Three tiers, chosen by where a test file sits (`npm test` runs all three in one Jest run):
 *
 * - unit: `*.test.ts` beside its code (gateway/, identity/, lib/, portal/, petstore/, openapi/,
 *   db/, bench/). No global setup. It may start HTTP servers in its own process on 127.0.0.1
 *   port 0 and run a short `node -e` for a clean heap; it reaches no Redis, no PostgreSQL, no
 *   PGlite (a WASM database, seconds to start), no browser, no gateway or pet store process.
 *   ESLint refuses the imports that would (eslint.config.mjs).
 * - integration: `test/**` outside test/browser/, after the global setup (a Redis and a
 *   PostgreSQL). A test of one module that needs any of the above sits at the module's path
 *   under test/ (identity/account-service.ts → test/identity/account-service.test.ts).
 * - browser: `test/browser/**`, in Chromium; its gateways run on PGlite.
 *
 * `npm run test:unit`, `test:integration` and `test:browser` run one tier each, named in TEST_TIER
 * (Jest's --selectProjects would swallow the test paths given after it).
 */
const shared = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] },
};
const ignored = ['/node_modules/', '/data/', '/dist/'];

const tiers = [
  { ...shared, displayName: 'unit', testMatch: ['<rootDir>/**/*.test.ts'], testPathIgnorePatterns: [...ignored, '<rootDir>/test/'] },
  {
    ...shared,
    displayName: 'integration',
    testMatch: ['<rootDir>/test/**/*.test.ts'],
    testPathIgnorePatterns: [...ignored, '<rootDir>/test/browser/'],
    // A Redis and a PostgreSQL for the whole run: the machine's own, or private ones started when those do not answer.
    globalSetup: '<rootDir>/test/support/global-setup.ts',
    globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  },
  { ...shared, displayName: 'browser', testMatch: ['<rootDir>/test/browser/**/*.test.ts'], testPathIgnorePatterns: ignored },
];
const tier = process.env.TEST_TIER;
if (tier && !tiers.some((t) => t.displayName === tier)) throw new Error(`TEST_TIER must be one of ${tiers.map((t) => t.displayName).join(', ')}; got "${tier}".`);

/** @type {import('jest').Config} */
module.exports = {
  projects: tier ? tiers.filter((t) => t.displayName === tier) : tiers,
  // Starting PGlite (a WASM PostgreSQL) takes seconds, and far longer when both cores are busy.
  testTimeout: 60000,
  // Integration tests start real servers and databases; two workers match the machine's two cores.
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
