// ESLint with typescript-eslint's recommended rules, no warnings allowed (.ci/run): the server, workers, dashboard,
// SDK packages, scripts and tests.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // test/fixtures/sourcemaps: a bundle as esbuild and sentry-cli wrote it, kept byte for byte
  { ignores: ['dist/', 'packages/*/dist/', '.cache/', '.data/', 'coverage/', 'test-results/', 'tools/ferretdb/', '.scratch/', 'test/fixtures/sourcemaps/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // `_` marks what is left out on purpose (a destructured field dropped, an argument a signature needs)
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  { files: ['src/web/**', 'packages/browser/**', 'test/clients/browser-*.mjs', 'test/clients/sourcemap-app/**'], languageOptions: { globals: { ...globals.browser } } },
  // tests read JSON answers field by field: typing each answer would add nothing the assertions do not check
  { files: ['test/**'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs' }, rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
