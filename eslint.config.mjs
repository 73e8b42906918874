import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'dist/**', 'coverage/**', 'test-results/**', 'portal/public/vendor/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: "MemberExpression[object.name='process'][property.name='env']", message: 'Only entry points (main.ts) read process.env; pass it to the config parser.' }],
    },
  },
  // The house's "never" arrows (docs/architecture.md): each room may be read without the ones it must not know.
  {
    files: ['petstore/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/gateway', '**/gateway/**', '**/identity', '**/identity/**'], message: 'The pet store stands alone: it never imports the gateway or identity.' }] }] },
  },
  {
    files: ['identity/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/gateway', '**/gateway/**', '**/portal', '**/portal/**'], message: 'Identity never imports the gateway or the portal: the wiring hands it what it needs.' }] }] },
  },
  {
    files: ['cli/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/gateway', '**/gateway/**', '**/identity', '**/identity/**', '**/portal', '**/portal/**', '**/petstore', '**/petstore/**', '**/db', '**/db/**'], message: 'The admin CLI is a client of the admin API over HTTP only: it may import lib/, nothing else of the project.' }] }] },
  },
  {
    files: ['lib/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['../*', '../**'], message: 'lib/ imports nothing of the project.' }] }] },
  },
  // The unit tier (jest.config.js): a test beside its code reaches no Redis, PostgreSQL, PGlite, browser or served child process.
  {
    files: ['**/*.test.ts'],
    ignores: ['test/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: ['ioredis', 'pg', '@electric-sql/pglite', 'playwright-core'].map((name) => ({ name, message: 'A unit test reaches no server: move it to the same path under test/ (see jest.config.js).' })),
        patterns: [{
          group: ['**/db/pglite-database', '**/db/postgres-database', '**/db/open-database', '**/wiring/redis', '**/test/browser/**', ...['databases', 'gateway-harness', 'gateway-process', 'child-process', 'local-services', 'redis-server', 'postgres-server', 'pet-store-process', 'pet-store-upstream'].map((file) => `**/test/support/${file}`)],
          message: 'A unit test reaches no server: move it to the same path under test/ (see jest.config.js).',
        }],
      }],
    },
  },
  { files: ['gateway/main.ts', 'petstore/main.ts', 'cli/admin.ts', 'test/**', 'bench/**', '**/*.test.ts', '*.js', '*.mjs', 'scripts/**'], rules: { 'no-restricted-syntax': 'off' } },
  { files: ['*.js', 'test/support/*.js'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly', process: 'readonly' } }, rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
