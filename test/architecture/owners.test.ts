import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { STORE_IMPORTS_TO_MOVE, TABLE_OWNERS, WRITES_TO_MOVE } from '../../src/db/owners.js';

// Tables have owners (src/db/owners.ts): only the owning folder writes a table, and no module imports
// another folder's store. Both are read from the source text of src/, not linted, because a write is
// SQL (Kysely calls or `sql` templates) that no import rule sees. The crossings that exist today are
// listed in owners.ts, to move (issue 38): a new one fails here, and so does a listed one once gone.
const SRC = resolve(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const FILES = sourceFiles(SRC).map((path) => ({
  file: relative(SRC, path),
  text: readFileSync(path, 'utf8'),
}));
const folderOf = (file: string) => dirname(file).replace(/^\.$/, '');

/** The text of every `sql` tagged template, with each `${…}` replaced by a placeholder. */
function sqlTemplates(text: string): string[] {
  const found: string[] = [];
  const tag = /\bsql(?:<[^`;]*?>)?`/g;
  for (let match = tag.exec(text); match; match = tag.exec(text)) {
    let i = match.index + match[0].length;
    let body = '';
    for (let depth = 0; i < text.length; i++) {
      const char = text[i];
      if (depth === 0 && char === '\\') {
        body += text.slice(i, i + 2);
        i++;
      } else if (depth === 0 && char === '`') break;
      else if (depth === 0 && char === '$' && text[i + 1] === '{') {
        depth = 1;
        body += ' ? ';
        i++;
      } else if (depth > 0 && char === '{') depth++;
      else if (depth > 0 && char === '}') depth--;
      else if (depth === 0) body += char;
    }
    found.push(body);
    tag.lastIndex = i + 1;
  }
  return found;
}

// Words that follow `update` in SQL without being a table: `on conflict … do update set`, `for update
// skip locked`, `for update of d`, `for update nowait`.
const NOT_TABLES = new Set(['set', 'skip', 'of', 'nowait']);

/** Every table a module writes, once per statement: Kysely's builders and `sql` template text. */
function writesIn(text: string): string[] {
  const tables: string[] = [];
  for (const match of text.matchAll(
    /\.(?:insertInto|updateTable|deleteFrom|mergeInto|replaceInto)\(\s*['"]([a-z_]+)['"]/g,
  ))
    tables.push(match[1] ?? '');
  for (const template of sqlTemplates(text)) {
    for (const match of template.matchAll(
      /\b(?:insert\s+into|update|delete\s+from|merge\s+into|truncate(?:\s+table)?)\s+([a-z_][a-z0-9_]*)/gi,
    )) {
      const name = (match[1] ?? '').toLowerCase();
      // A partition (`deliveries_default`, `events_p20260101`) belongs to its table.
      if (!NOT_TABLES.has(name)) tables.push(name.replace(/_(?:default|p\d+)$/, ''));
    }
  }
  return tables;
}

const key = (a: string, b: string) => `${a} ${b}`;

test('the scanner finds writes in Kysely calls and sql templates, and not in comments or reads', () => {
  const text = [
    "await db.insertInto('users').values(row).execute();",
    "await trx\n  .updateTable(\n    'connections')",
    '// delete from tenants is never done here',
    'await sql`insert into ordering_heads (k) values (${k}) on conflict (k) do update set n = 1`.execute(db);',
    'await sql<{ id: string }>`update deliveries set x = ${x} where id in (select id from d for update skip locked)`;',
    'await sql`delete from events_default where ${sql.id(`x`)} < now()`.execute(db);',
    "await db.selectFrom('api_keys').selectAll().execute();",
    'await sql`truncate table sessions`.execute(db);',
  ].join('\n');
  assert.deepEqual(
    writesIn(text),
    ['users', 'connections', 'ordering_heads', 'deliveries', 'events', 'sessions'],
    'the tables written by the sample, in order',
  );
});

test('every table has an owner folder, and every owner folder exists', () => {
  for (const [table, owner] of Object.entries(TABLE_OWNERS)) {
    assert.ok(
      readdirSync(join(SRC, owner)).length > 0,
      `${table}'s owner src/${owner}/ is not a folder of src/`,
    );
  }
});

test('SQL that writes a table lives in its owner folder (or is a listed crossing, to move)', () => {
  const owners: Record<string, string> = TABLE_OWNERS;
  const crossings = new Set<string>();
  const unowned: string[] = [];
  for (const { file, text } of FILES) {
    for (const table of writesIn(text)) {
      const owner = owners[table];
      if (owner === undefined) unowned.push(`${file} writes ${table}`);
      else if (folderOf(file) !== owner) crossings.add(key(file, table));
    }
  }
  assert.deepEqual(unowned, [], 'tables written with no owner in src/db/owners.ts');
  const listed = new Set(WRITES_TO_MOVE.map((w) => key(w.file, w.table)));
  const added = [...crossings].filter((c) => !listed.has(c));
  const gone = [...listed].filter((c) => !crossings.has(c));
  assert.deepEqual(
    added,
    [],
    "writes to another folder's table (file table): go through the owner's store (src/db/owners.ts)",
  );
  assert.deepEqual(gone, [], 'crossings listed in WRITES_TO_MOVE that no longer exist: remove them there');
});

/** The modules of src/ a module imports (static, dynamic and `export … from`), relative to src/. */
function importsOf(file: string, text: string): string[] {
  const specifiers = [
    ...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g),
  ];
  return specifiers.map((m) =>
    relative(SRC, resolve(SRC, dirname(file), (m[1] ?? '').replace(/\.js$/, '.ts'))),
  );
}

const isStore = (file: string) => /^(?:.*-)?store\.ts$/.test(basename(file));

test("the import scanner finds another folder's store, and not its own folder's or a domain module", () => {
  const text = [
    "import { countConnections } from '../connections/store.js';",
    "import type { LogRow } from '../delivery/log-store.js';",
    "export { deliveryCounts24h } from './store.js';",
    "import { restoreBackup } from '../db/restore.js';",
    "const tokens = await import('../oauth/store.js');",
    "import { recordFailureStreaks } from '../connections/failure-streak.js';",
  ].join('\n');
  const crossings = importsOf('hub/hub.ts', text).filter(
    (target) => isStore(target) && folderOf(target) !== 'hub',
  );
  assert.deepEqual(
    crossings,
    ['connections/store.ts', 'delivery/log-store.ts', 'oauth/store.ts'],
    "the other folders' stores the sample imports, in order",
  );
  assert.deepEqual(
    importsOf('delivery/event-log.ts', "export { x } from './store.js';").filter(
      (target) => isStore(target) && folderOf(target) !== 'delivery',
    ),
    [],
    "a re-export of the module's own folder's store is no crossing",
  );
});

test("no module imports another folder's store module (or it is a listed crossing, to move)", () => {
  const crossings = new Set<string>();
  for (const { file, text } of FILES) {
    for (const target of importsOf(file, text)) {
      if (isStore(target) && folderOf(target) !== folderOf(file)) crossings.add(key(file, target));
    }
  }
  const listed = new Set(STORE_IMPORTS_TO_MOVE.map((i) => key(i.file, i.store)));
  const added = [...crossings].filter((c) => !listed.has(c));
  const gone = [...listed].filter((c) => !crossings.has(c));
  assert.deepEqual(
    added,
    [],
    "imports of another folder's store (file store): call the owner's functions instead",
  );
  assert.deepEqual(
    gone,
    [],
    'crossings listed in STORE_IMPORTS_TO_MOVE that no longer exist: remove them there',
  );
});
