import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { existsSync, globSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, posix } from 'node:path';
import { test } from 'node:test';

// What the documentation names must exist. In README.md and every page under docs/, each inline code
// span (outside fenced blocks, which hold examples) is read as a claim about the repository:
//
// - a repository path (`src/http/pagination.ts`, `test/helpers/`, `src/**/routes.ts`) must be on disk;
// - a bare file name (`publish.ts`) must be the name of some file of the repository;
// - a code name (`TenantScope`, `buildApp(config)`, `h.setNow`) must be a word of the code;
// - a function written as a call (`waitUntil(condition, …)`) must be one that code outside the test
//   files defines or calls, not a helper local to one test file.
//
// A page that names `toPage` when the function is `listPage` fails here, naming the file, the line and
// the token. Relative links and their #anchors are checked too.

const ROOT = new URL('../../', import.meta.url).pathname;
const SELF = 'test/docs/names.test.ts';

/**
 * What the docs may name although the repository does not hold it, each with why. Keep it short: an
 * entry belongs here only when it is not hubgate's (another project's API, quoted for comparison) or
 * an example rather than a claim. An entry that excuses nothing any more fails the last test.
 */
const NOT_OURS: Readonly<Record<string, string>> = {
  './x.js': 'decision 0033: the shape of every relative import, not a file',
  allowImportingTsExtensions: 'a TypeScript option decision 0033 would turn on, not on yet',
  rewriteRelativeImportExtensions: 'a TypeScript option decision 0033 would turn on, not on yet',
  erasableSyntaxOnly: 'a TypeScript option decision 0033 would turn on, not on yet',
  AuthServerAllowlist: "Chromium's policy naming the hosts it negotiates Kerberos with",
  verifyWebhook: 'the function of the Node.js snippet in docs/api/signatures.md, run by snippets.test.ts',
  get_data: "Flask's request API, in the Python snippet of docs/api/signatures.md",
  setResponseOverrideBits: 'a Chrome DevTools Protocol command (WebAuthn domain), sent by a browser test',
  mcpAuthRouter:
    "the MCP SDK's Express router for an authorization server, which decision 0087 weighs and leaves",
  OAuthServerProvider: "the MCP SDK's interface behind mcpAuthRouter, weighed and left in decision 0087",
};

/** Example IDs, keys and secrets (`tnt_AbCdEfGh`): random characters after a prefix, not names. */
const EXAMPLE_VALUE = /^(ten|usr|key|pkey|con|evt|dlv|chn|pky|aud|req|tnt|plt|whsec)_/;

/** Where the code is: every word in these files counts as a name the code holds. */
const CODE_DIRS = ['src', 'ui', 'scripts', 'bench', 'test', 'eslint-rules'];
const CODE_ROOT_FILES = [
  'eslint.config.js',
  'eslint.layers.js',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
];
const CODE_FILE = /\.(ts|tsx|js|mjs|cjs|json|css|html|sql)$/;
/** Built or made at run time, never in the repository: a page may name them without them existing. */
const GENERATED = /^(dist|node_modules|data|scratch|screenshots|\.cache)\//;
const NOT_SOURCE = ['node_modules', 'dist', '.git', 'data', 'screenshots', 'scratch', '.cache'];

const PATH_PREFIX = /^(src|ui|test|bench|scripts|docs|\.ci)\/|^eslint[.-]/;
const FILE_EXTENSION = /\.(ts|tsx|js|mjs|md|json)$/;
const BARE_FILE_NAME = /^[\w.-]+\.(ts|tsx|js|mjs)$/;
const IDENTIFIER = '[A-Za-z_$][\\w$]*';
/** `name`, `a.b.c`, each optionally called: `buildApp(config)`, `h.request(method, path, …)`. */
const CODE_NAME = new RegExp(`^(${IDENTIFIER}(?:\\.${IDENTIFIER})*)(\\(.*\\))?$`);
const CALL = new RegExp(`^(${IDENTIFIER})\\(.*\\)$`);
/** camelCase or PascalCase: a lower-case letter followed by a capital. */
const CAMEL = /[a-z][A-Z]/;
const FUNCTION_DECLARATION = new RegExp(
  `\\bfunction\\*?\\s+(${IDENTIFIER})|\\b(?:const|let|var)\\s+(${IDENTIFIER})\\s*(?::[^=;]+)?=\\s*` +
    `(?:async\\s*)?(?:function\\b|\\(|<|${IDENTIFIER}\\s*=>)`,
  'g',
);

interface Span {
  file: string;
  line: number;
  token: string;
}

interface Finding {
  span: Span;
  /** The path or name that is missing, as NOT_OURS would list it. */
  name: string;
  what: string;
}

const posixPath = (f: string) => f.split('\\').join('/');

function markdownFiles(): string[] {
  return ['README.md', ...globSync('docs/**/*.md', { cwd: ROOT }).map(posixPath).sort()];
}

/** The text with every fenced block's lines blanked (they hold examples), line numbers kept. */
function withoutFences(text: string): string {
  let fence: string | null = null;
  return text
    .split('\n')
    .map((line) => {
      const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
      if (fence === null && marker) {
        fence = marker;
        return '';
      }
      if (fence !== null) {
        if (marker?.startsWith(fence) && line.trim() === marker) fence = null;
        return '';
      }
      return line;
    })
    .join('\n');
}

const lineAt = (text: string, index: number) => text.slice(0, index).split('\n').length;

/** The inline code spans of a Markdown file, with the line each starts on. */
function codeSpans(file: string): Span[] {
  const text = withoutFences(readFileSync(join(ROOT, file), 'utf8'));
  return [...text.matchAll(/(`+)([^`][\s\S]*?)\1(?!`)/g)]
    .map((match) => ({ file, line: lineAt(text, match.index), token: match[2]!.replace(/\s+/g, ' ').trim() }))
    .filter((span) => span.token !== '');
}

function codeFiles(): string[] {
  const inDirs = CODE_DIRS.flatMap((dir) =>
    globSync(`${dir}/**/*`, { cwd: ROOT, exclude: (name) => name === 'node_modules' }),
  );
  return [...inDirs, ...CODE_ROOT_FILES]
    .map(posixPath)
    .filter((f) => f !== SELF && CODE_FILE.test(f) && statSync(join(ROOT, f)).isFile());
}

const code = codeFiles().map((file) => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }));

/** Every word of the code: identifiers, property names, words in strings and comments alike. */
const codeWords: ReadonlySet<string> = new Set(
  code.flatMap(({ text }) => text.match(/[A-Za-z_$][\w$]*/g) ?? []),
);

/**
 * What the code outside test files defines or calls: `name(`, `name<T>(`, `function name`, `const name
 * = (…) =>`. A page that writes `name(args)` points contributors to a function they can use; one
 * local to a single test file is not that.
 */
const sharedFunctions: ReadonlySet<string> = new Set(
  code
    .filter(({ file }) => !file.endsWith('.test.ts'))
    .flatMap(({ text }) => [
      ...[...text.matchAll(new RegExp(`(${IDENTIFIER})\\s*(?:<[^<>()]*>)?\\s*\\(`, 'g'))].map((m) => m[1]!),
      ...[...text.matchAll(FUNCTION_DECLARATION)].map((m) => (m[1] ?? m[2])!),
    ]),
);

/** Every file name of the repository, for bare file names. */
const fileNames: ReadonlySet<string> = new Set(
  globSync('**/*', { cwd: ROOT, exclude: (name) => NOT_SOURCE.includes(name) }).map((f) => basename(f)),
);

function isRepositoryPath(token: string): boolean {
  if (/\s/.test(token) || token.startsWith('/') || token.includes('://') || token.startsWith('@'))
    return false;
  if (GENERATED.test(token)) return false;
  return PATH_PREFIX.test(token) || (token.includes('/') && FILE_EXTENSION.test(token.replace(/#.*$/, '')));
}

/**
 * The glob a documented path stands for: `<domain>` and `…` inside a name stand for any name, a `…`
 * segment for any folders; a `:12` line or `#anchor` after it is dropped.
 */
function pathPattern(token: string): string {
  return token
    .replace(/(:\d+(-\d+)?|#.*)$/, '')
    .split('/')
    .map((segment) =>
      segment === '…' || segment === '...' ? '**' : segment.replace(/<[^>]*>|…|\.\.\./g, '*'),
    )
    .join('/');
}

function matches(base: string, pattern: string): boolean {
  const path = posix.normalize(posix.join(base, pattern));
  if (path.startsWith('..')) return false;
  const dirOnly = pattern.endsWith('/');
  if (!/[*?[]/.test(path)) {
    return existsSync(join(ROOT, path)) && (!dirOnly || statSync(join(ROOT, path)).isDirectory());
  }
  const found = globSync(dirOnly ? path.replace(/\/$/, '') : path, {
    cwd: ROOT,
    exclude: (name) => NOT_SOURCE.includes(name),
  });
  return found.some((f) => !dirOnly || statSync(join(ROOT, f)).isDirectory());
}

/**
 * Whether a documented path names something on disk: from the repository's root or, for a path that
 * does not start at a top folder, from the page's own folder, src/ or ui/ (the architecture page names
 * modules by their folder: `access/gate.ts`). An import's `.js` is also its `.ts` source, and an
 * all-capitals file stem that matches nothing is a placeholder (`bench/NAME.ts`).
 */
function pathExists(file: string, token: string): boolean {
  const pattern = pathPattern(token);
  const bases = PATH_PREFIX.test(token) ? ['.'] : ['.', dirname(file), 'src', 'ui'];
  const source = pattern.replace(/\.js$/, '.ts');
  if (bases.some((base) => matches(base, pattern) || matches(base, source))) return true;
  const placeholder = pattern.replace(/(^|\/)[A-Z][A-Z_]*(?=\.[a-z]+$)/, '$1*');
  return placeholder !== pattern && bases.some((base) => matches(base, placeholder));
}

/** The names a code span claims the code holds; none when it is not a code name. */
function claimedNames(token: string): string[] {
  const match = CODE_NAME.exec(token);
  if (!match || EXAMPLE_VALUE.test(token)) return [];
  const [, name, call] = match;
  const parts = name!.split('.');
  if (parts.length === 1 && call === undefined && !CAMEL.test(name!)) return [];
  if (parts.length > 1 && call === undefined && FILE_EXTENSION.test(name!)) return [];
  // `rules.N.matchers.M.value`: a capital letter or word alone stands for an index or a name.
  return parts.filter((part) => !/^[A-Z][A-Z_]*$/.test(part));
}

const spans = markdownFiles().flatMap(codeSpans);

/** What each rule finds missing, before NOT_OURS excuses anything. */
const RULES = {
  paths: (s: Span): Finding[] =>
    isRepositoryPath(s.token) && !pathExists(s.file, s.token)
      ? [{ span: s, name: s.token, what: 'is not a file or folder of the repository' }]
      : [],
  fileNames: (s: Span): Finding[] =>
    BARE_FILE_NAME.test(s.token) && !fileNames.has(s.token)
      ? [{ span: s, name: s.token, what: 'is the name of no file of the repository' }]
      : [],
  names: (s: Span): Finding[] =>
    claimedNames(s.token)
      .filter((name) => !codeWords.has(name))
      .map((name) => ({ span: s, name, what: `names ${name}, which is not in the code` })),
  functions: (s: Span): Finding[] => {
    const name = CALL.exec(s.token)?.[1];
    return name !== undefined && codeWords.has(name) && !sharedFunctions.has(name)
      ? [{ span: s, name, what: `calls ${name}(), which no code outside the test files defines or calls` }]
      : [];
  },
};

function unexcused(rule: keyof typeof RULES): string[] {
  return spans
    .flatMap(RULES[rule])
    .filter((f) => !(f.name in NOT_OURS))
    .map((f) => `${f.span.file}:${f.span.line}: \`${f.span.token}\` ${f.what}`);
}

test('the docs and the code are read: README.md, every page under docs/, and not this file', () => {
  assert.ok(spans.length > 1000, `found only ${spans.length} code spans in the docs`);
  assert.ok(codeWords.has('buildApp'), 'the code words include buildApp, which src/app.ts exports');
  assert.ok(!codeWords.has('toPage'), 'the code words leave out this file, which names what the code lacks');
  assert.ok(sharedFunctions.has('waitUntil'), 'test/helpers/ counts as shared code');
});

test('every repository path the docs name exists', () => {
  const missing = unexcused('paths');
  assert.deepEqual(missing, [], `paths named in the docs do not exist:\n${missing.join('\n')}`);
});

test('every bare file name the docs give is a file of the repository', () => {
  const missing = unexcused('fileNames');
  assert.deepEqual(missing, [], `file names in the docs name no file:\n${missing.join('\n')}`);
});

test('every code name the docs give is a word of the code', () => {
  const missing = unexcused('names');
  assert.deepEqual(missing, [], `names in the docs that the code does not hold:\n${missing.join('\n')}`);
});

test('every function the docs write as a call is one the code outside test files defines or calls', () => {
  const missing = unexcused('functions');
  assert.deepEqual(missing, [], `functions the docs name that no shared code holds:\n${missing.join('\n')}`);
});

test('every entry of NOT_OURS says why and still excuses something', () => {
  const found = new Set(
    spans.flatMap((s) => Object.values(RULES).flatMap((rule) => rule(s))).map((f) => f.name),
  );
  for (const [name, why] of Object.entries(NOT_OURS)) {
    assert.ok(why.length > 0, `NOT_OURS says why ${name} is excused`);
    assert.ok(found.has(name), `${name} is in the code now, or no page names it: take it off NOT_OURS`);
  }
});

const anchorCache = new Map<string, Set<string>>();

/** The anchors GitHub makes for a page's headings: lower case, punctuation dropped, spaces as hyphens. */
function anchorsOf(file: string): Set<string> {
  const known = anchorCache.get(file);
  if (known) return known;
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const text = withoutFences(readFileSync(join(ROOT, file), 'utf8'));
  for (const [, heading] of text.matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const slug = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  anchorCache.set(file, anchors);
  return anchors;
}

test('every relative link of the docs leads to a file, and every #anchor to a heading of it', () => {
  const broken: string[] = [];
  for (const file of markdownFiles()) {
    // Code spans can hold `](`; blank their brackets so they are not read as links.
    const text = withoutFences(readFileSync(join(ROOT, file), 'utf8')).replace(/`[^`\n]*`/g, (span) =>
      span.replace(/[[\]()]/g, ' '),
    );
    for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1]!;
      if (/^[a-z]+:/i.test(target)) continue;
      const [path = '', anchor] = target.split('#');
      const linked = path === '' ? file : posix.normalize(posix.join(dirname(file), path));
      const where = `${file}:${lineAt(text, match.index)}: (${target})`;
      if (!existsSync(join(ROOT, linked))) broken.push(`${where} leads to no file`);
      else if (anchor !== undefined && linked.endsWith('.md') && !anchorsOf(linked).has(anchor)) {
        broken.push(`${where} names no heading of ${linked}`);
      }
    }
  }
  assert.deepEqual(broken, [], `links in the docs lead nowhere:\n${broken.join('\n')}`);
});
