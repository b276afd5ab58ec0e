import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

// The web UI's import rules (eslint.config.js) are made from UI_FEATURES: a feature folder missing
// from it would have its imports checked by no rule at all. Every folder of ui/, and of the
// operator console (ui/platform/), must be named there.
const UI = resolve(import.meta.dirname, '../../ui');
// Plain JavaScript with no types: imported by a path held in a variable, its export typed here.
const configPath = '../../eslint.config.js';
const { UI_FEATURES } = (await import(configPath)) as { UI_FEATURES: Record<string, readonly string[]> };
const foldersOf = (dir: string) =>
  readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);

test('every feature folder of the web UI is under the import rules', () => {
  const folders = [
    ...foldersOf(UI),
    ...foldersOf(join(UI, 'platform')).map((name) => `platform/${name}`),
  ].sort();
  const missing = folders.filter((folder) => !(folder in UI_FEATURES));
  assert.deepEqual(
    missing,
    [],
    `ui folders missing from UI_FEATURES in eslint.config.js: ${missing.join(', ')}`,
  );
});
