import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { TABLE_OWNERS } from '../../src/db/owners.js';

// The contributors' maps (docs/contributors/architecture.md for src/, web-ui.md for ui/) are where a
// newcomer looks first: a folder missing from its map, or a map naming a folder that is gone, is a
// lie this test refuses. A map is the first fenced block under its heading; in it, a line starting at
// column 0 with `name/` is a folder of the repository, and every `a/` or `a/b/` on an indented line is
// a folder of the tree the block opens with (`src/`, `ui/`), written from that tree's root.
const ROOT = resolve(import.meta.dirname, '../..');

function mapBlock(doc: string, heading: string): string[] {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `${doc} has no "${heading}" section`);
  const block = /\n```[^\n]*\n([\s\S]*?)\n```/.exec(text.slice(start));
  assert.ok(block?.[1], `${doc}: no fenced block under "${heading}"`);
  return block[1].split('\n');
}

/** The folders a map names (relative to its tree), and the repository folders it names at column 0. */
function namedFolders(lines: string[], tree: string): { inTree: Set<string>; atRoot: string[] } {
  const inTree = new Set<string>();
  const atRoot: string[] = [];
  for (const line of lines) {
    const top = /^([a-z][\w-]*)\//.exec(line);
    if (top?.[1]) {
      atRoot.push(top[1]);
      continue;
    }
    for (const match of line.matchAll(/(?<![\w./-])((?:[a-z][\w-]*\/)+)(?![\w.-])/g)) {
      inTree.add((match[1] ?? '').slice(0, -1));
    }
  }
  assert.ok(atRoot.includes(tree), `the map does not open with ${tree}/`);
  return { inTree, atRoot };
}

function foldersUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      return [path, ...foldersUnder(path)];
    });
}

function checkMap(doc: string, heading: string, tree: string) {
  const { inTree, atRoot } = namedFolders(mapBlock(doc, heading), tree);
  const actual = foldersUnder(join(ROOT, tree)).map((path) => relative(join(ROOT, tree), path));
  const missing = actual.filter((folder) => !inTree.has(folder)).sort();
  assert.deepEqual(missing, [], `folders of ${tree}/ missing from the map in ${doc}: add them`);
  const gone = [...inTree].filter((folder) => !actual.includes(folder)).sort();
  assert.deepEqual(gone, [], `${doc} names folders that ${tree}/ does not have`);
  const goneAtRoot = atRoot.filter((folder) => !existsSync(join(ROOT, folder))).sort();
  assert.deepEqual(goneAtRoot, [], `${doc} names folders the repository does not have`);
}

test('docs/contributors/architecture.md maps every folder of src/, and only those', () => {
  checkMap('docs/contributors/architecture.md', '## The folder map', 'src');
});

test('docs/contributors/web-ui.md maps every folder of ui/, and only those', () => {
  checkMap('docs/contributors/web-ui.md', '## Where things are', 'ui');
});

test('the map reader takes indented names as folders of the tree, not what a root line says', () => {
  const { inTree } = namedFolders(
    ['src/', '  a/    one', '  a/b/  two, see docs/x.md', 'test/  c/ d/'],
    'src',
  );
  assert.deepEqual(
    [...inTree],
    ['a', 'a/b'],
    'indented names are folders of the tree; root lines are not read',
  );
});

test('docs/contributors/architecture.md lists every table under its owner, as src/db/owners.ts does', () => {
  const text = readFileSync(join(ROOT, 'docs/contributors/architecture.md'), 'utf8');
  const rows = new Map(
    [...text.matchAll(/^\| `([\w/-]+)\/` +\|(.*)\|\s*$/gm)].map((m) => [m[1] ?? '', m[2] ?? '']),
  );
  for (const [table, owner] of Object.entries(TABLE_OWNERS)) {
    assert.ok(
      rows.get(owner)?.includes(`\`${table}\``),
      `architecture.md's owner table does not list ${table} under src/${owner}/`,
    );
    assert.ok(statSync(join(ROOT, 'src', owner)).isDirectory(), `src/${owner} is a folder`);
  }
  const listed = [...rows.values()].flatMap((cells) => [...cells.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]));
  assert.equal(listed.length, Object.keys(TABLE_OWNERS).length, 'each table once in the owner table');
});
