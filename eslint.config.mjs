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
  { files: ['gateway/main.ts', 'petstore/main.ts', 'test/**', 'bench/**', '**/*.test.ts', '*.js', '*.mjs', 'scripts/**'], rules: { 'no-restricted-syntax': 'off' } },
  { files: ['*.js', 'test/support/*.js'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly', process: 'readonly' } }, rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
