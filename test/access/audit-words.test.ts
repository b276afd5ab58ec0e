import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AUDIT_ACTIONS } from '../../src/access/audit.js';
import { actionWords, AUDIT_ACTION_WORDS, fieldWords } from '../../ui/audit/words.js';

// The audit log says every action in words (docs/operators/web-ui.md). The server's actions are the one
// list the audit writer's type takes (src/access/audit.ts); the UI's words are the one table of
// ui/audit/words.ts. A new action without words, or words for an action that no longer exists, fails here.
const src = fileURLToPath(new URL('../../src/', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

describe('audit actions in words', () => {
  test('every action the server can record has its words, and no words stand for no action', () => {
    const missing = AUDIT_ACTIONS.filter((action) => actionWords(action) === null);
    assert.deepEqual(missing, [], `actions shown as raw codes in the audit log: ${missing.join(', ')}`);
    const stale = Object.keys(AUDIT_ACTION_WORDS).filter(
      (action) => !(AUDIT_ACTIONS as readonly string[]).includes(action),
    );
    assert.deepEqual(stale, [], `words for actions the server never records: ${stale.join(', ')}`);
    for (const action of AUDIT_ACTIONS) {
      const words = actionWords(action) ?? '';
      assert.match(words, /^[A-Z][^_]*[a-z]/, `${action} reads “${words}”, not words`);
      assert.ok(!words.includes(action), `${action} is said with its own code`);
    }
  });

  test('the list is the server’s: only the audit writer inserts audit rows, and every action it is given is listed', () => {
    const writers: string[] = [];
    const written = new Set<string>();
    for (const file of sourceFiles(src)) {
      if (file.includes(`${join('db', 'migrations')}`)) continue;
      const text = readFileSync(file, 'utf8');
      if (/insertInto\(\s*'audit_log'\s*\)/.test(text)) writers.push(file.slice(src.length));
      // The writer's entries: `action: 'x.y'` (a dotted name; the CLI's own `action: 'list'` is not one).
      for (const match of text.matchAll(/\baction:\s*'([a-z_]+(?:\.[a-z_]+)+)'/g))
        written.add(match[1] ?? '');
    }
    assert.deepEqual(writers, ['access/audit.ts'], 'audit rows are written elsewhere than recordAudit');
    assert.ok(written.size >= 30, `only ${written.size} actions found in the source: the scan is broken`);
    const unlisted = [...written].filter((action) => !(AUDIT_ACTIONS as readonly string[]).includes(action));
    assert.deepEqual(unlisted, [], `actions written but not in AUDIT_ACTIONS: ${unlisted.join(', ')}`);
  });

  test('field names in the details are words, not code', () => {
    const said = Object.fromEntries(
      ['url', 'apiBaseUrl', 'signingSecret', 'oauth2ClientCredentials', 'displayName', 'maxPerSecond'].map(
        (name) => [name, fieldWords(name)],
      ),
    );
    assert.deepEqual(
      said,
      {
        url: 'URL',
        apiBaseUrl: 'API base URL',
        signingSecret: 'signing secret',
        oauth2ClientCredentials: 'OAuth2 client credentials',
        displayName: 'name',
        maxPerSecond: 'rate limit',
      },
      'a field name in the audit details is not said in words',
    );
  });
});
