import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { DOCS_PATH, renderConfigurationDocs } from '../../scripts/config-docs.js';
import { SETTINGS } from '../../src/config/table.js';

test('docs/configuration.md is what the table generates', async () => {
  const committed = readFileSync(DOCS_PATH, 'utf8');
  assert.equal(
    committed,
    await renderConfigurationDocs(),
    'docs/configuration.md differs from the table in src/config/table.ts: run `npm run docs:config`',
  );
});

test('the docs name every variable of the table, once', async () => {
  const docs = await renderConfigurationDocs();
  for (const name of Object.keys(SETTINGS)) {
    const rows = docs.split('\n').filter((line) => line.startsWith(`| \`${name}\` `));
    assert.equal(rows.length, 1, `${name} has ${rows.length} rows in docs/configuration.md`);
  }
});
