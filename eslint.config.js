import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import assertMessage from './eslint-rules/assert-message.js';
import { layerRules } from './eslint.layers.js';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'scratch/', 'data/', 'screenshots/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly' },
    },
    rules: {
      'no-console': ['error', { allow: ['error', 'warn'] }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='only']",
          message: 'focused tests silence the suite',
        },
      ],
    },
  },
  ...layerRules(),
  // Functions fit on a screen (server and web UI); route plugins and buildApp are lists and say so where they are.
  {
    files: ['src/**/*.ts', 'ui/**/*.ts', 'ui/**/*.tsx'],
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: { 'max-lines-per-function': ['error', { max: 60, IIFEs: true }] },
  },
  {
    files: ['test/**/*.ts'],
    plugins: { local: { rules: { 'assert-message': assertMessage } } },
    rules: { 'local/assert-message': 'error' },
  },
  // Benchmarks and scripts are command-line programs: printing is their job.
  { files: ['bench/**', 'scripts/**'], rules: { 'no-console': 'off' } },
);
