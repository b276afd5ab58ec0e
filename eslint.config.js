import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import assertMessage from './eslint-rules/assert-message.js';
import { layerRules } from './eslint.layers.js';

// ---- The web UI (ui/): docs/contributors/web-ui/code.md says why each rule is there ----

/**
 * Which folder of ui/ may import which. A feature imports common/ and, where named here, another
 * feature it builds on on purpose; common/ imports no feature, and only common/routes.ts reaches
 * into src/ (type-only, for the API's shapes). The console's parts (platform/alerting, monitoring,
 * tenants) import the console's own root files (platform/*.ts*) but not each other.
 */
export const UI_FEATURES = {
  common: [],
  overview: [],
  connections: ['event-types'],
  connect: ['connections'],
  consent: [],
  sources: [],
  usage: [],
  deliveries: ['connections'],
  'event-types': [],
  keys: [],
  audit: [],
  passkeys: [],
  profile: ['passkeys'],
  people: ['passkeys'],
  settings: [],
  // The portal page shows the tenant UI's own connection and delivery pages (decision 0079).
  portal: ['connections', 'deliveries'],
  'sign-in': ['passkeys'],
  setup: [],
  platform: [],
  'platform/alerting': [],
  'platform/monitoring': [],
  'platform/oauth': [],
  'platform/tenants': [],
};

/** A component's JSX is one idea however many lines it takes; a hook is logic, and stays short. */
const HOOK_LINES = 60;
const maxHookLines = {
  meta: {
    type: 'suggestion',
    docs: { description: `a hook (a function named use…) fits in ${HOOK_LINES} lines` },
    messages: {
      long: 'Hook {{name}} has {{lines}} lines (at most {{max}}): split what it does into smaller hooks.',
    },
    schema: [{ type: 'integer', minimum: 1 }],
  },
  create(context) {
    const max = context.options[0] ?? HOOK_LINES;
    const check = (node, name) => {
      if (!name || !/^use[A-Z]/.test(name)) return;
      const lines = node.loc.end.line - node.loc.start.line + 1;
      if (lines > max) context.report({ node, messageId: 'long', data: { name, lines, max } });
    };
    return {
      FunctionDeclaration: (node) => check(node, node.id?.name),
      'VariableDeclarator > ArrowFunctionExpression': (node) => check(node, node.parent.id.name),
      'VariableDeclarator > FunctionExpression': (node) => check(node, node.parent.id.name),
    };
  },
};

const API_PATH = {
  message:
    'API paths live in ui/common/routes.ts only: call api(routes.…) (or routeUrl/routeText) so that the path and its types cannot disagree.',
};

function uiRules() {
  const folders = Object.keys(UI_FEATURES);
  const up = '^(\\.\\./)+';
  const importBlocks = folders.map((folder) => {
    const own = folder.split('/');
    const allowed = new Set([folder, ...UI_FEATURES[folder], 'common']);
    // A console part may import the console's root (platform/*.ts*), and the root its parts.
    if (own[0] === 'platform') allowed.add('platform');
    const forbidden = folders
      .filter((other) => !allowed.has(other) && !(folder === 'platform' && other.startsWith('platform/')))
      .map((other) => ({
        regex: `${up}${other.split('/').at(-1)}/`,
        message: `ui/${folder}/ may not import ui/${other}/: features import common/ (and what eslint.config.js's UI_FEATURES names), never each other.`,
      }));
    const always = [
      {
        regex: `${up}(app|main)\\.js$`,
        message: 'app.tsx and main.tsx import the features, never the other way.',
      },
      ...(folder === 'common'
        ? []
        : [{ regex: `${up}src/`, message: 'Only ui/common/routes.ts imports from src/ (type-only).' }]),
    ];
    const files = folder === 'platform' ? ['ui/platform/*.ts', 'ui/platform/*.tsx'] : [`ui/${folder}/**`];
    return { files, rules: { 'no-restricted-imports': ['error', { patterns: [...forbidden, ...always] }] } };
  });
  return [
    {
      files: ['ui/**/*.ts', 'ui/**/*.tsx'],
      linterOptions: { reportUnusedDisableDirectives: 'error' },
      plugins: { 'ui-size': { rules: { 'max-hook-lines': maxHookLines } } },
      rules: {
        // Logic is measured in statements (JSX is one expression however long); lines cap the markup.
        'max-statements': ['error', 15],
        'max-lines-per-function': ['error', { max: 60, IIFEs: true }],
        'ui-size/max-hook-lines': ['error', HOOK_LINES],
        'max-lines': ['error', { max: 600, skipBlankLines: true, skipComments: true }],
        'no-restricted-syntax': [
          'error',
          { selector: 'Literal[value=/\\u002Fapi\\u002Fv1\\u002F/]', ...API_PATH },
          { selector: 'TemplateElement[value.raw=/\\u002Fapi\\u002Fv1\\u002F/]', ...API_PATH },
          { selector: 'JSXText[value=/\\u002Fapi\\u002Fv1\\u002F/]', ...API_PATH },
        ],
      },
    },
    { files: ['ui/**/*.tsx'], rules: { 'max-lines-per-function': ['error', { max: 150, IIFEs: true }] } },
    { files: ['ui/common/routes.ts'], rules: { 'no-restricted-syntax': 'off' } },
    ...importBlocks,
    {
      files: ['ui/*.ts', 'ui/*.tsx'],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              {
                regex: '^(\\.\\./)+src/',
                message: 'Only ui/common/routes.ts imports from src/ (type-only).',
              },
            ],
          },
        ],
      },
    },
  ];
}

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
  // Functions fit on a screen; route plugins and buildApp are lists and say so where they are.
  {
    files: ['src/**/*.ts'],
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: { 'max-lines-per-function': ['error', { max: 60, IIFEs: true }] },
  },
  ...uiRules(),
  {
    files: ['test/**/*.ts'],
    plugins: { local: { rules: { 'assert-message': assertMessage } } },
    rules: { 'local/assert-message': 'error' },
  },
  // Benchmarks and scripts are command-line programs: printing is their job.
  { files: ['bench/**', 'scripts/**'], rules: { 'no-console': 'off' } },
);
