import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { signatureHeaders } from '../../src/outbound/signing.js';

// The verification snippets of docs/api/signatures.md, run as they are printed against requests signed
// by hubgate's own signing code: a reader who copies one gets a verifier that works.
const PAGE = 'docs/api/signatures.md';
const page = readFileSync(new URL(`../../${PAGE}`, import.meta.url), 'utf8');

function snippet(name: string): string {
  const match = new RegExp(`<!-- snippet:${name} -->\\s*\`\`\`[a-z]*\\n([\\s\\S]*?)\\n\`\`\``).exec(page);
  assert.ok(match?.[1], `${PAGE} has a fenced code block after <!-- snippet:${name} -->`);
  return match[1];
}

const dir = mkdtempSync(join(tmpdir(), 'hubgate-snippets-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Where each snippet runs: the interpreter, the file it is written to, and what must be installed. */
const RUNNERS = [
  { name: 'node', file: 'verify-webhook.mjs', command: process.execPath, needs: [] as string[] },
  { name: 'python', file: 'verify_webhook.py', command: 'python3', needs: ['python3'] },
  { name: 'sh', file: 'verify-webhook.sh', command: 'sh', needs: ['openssl'] },
];

/** Null when `program` runs, else why not. */
function missing(program: string): string | null {
  const probe = spawnSync(program, ['--version'], { encoding: 'utf8' });
  if (probe.error) return probe.error.message;
  // `openssl --version` is not an option everywhere; `openssl version` is.
  if (program === 'openssl' && probe.status !== 0) {
    const retry = spawnSync(program, ['version'], { encoding: 'utf8' });
    return retry.error ? retry.error.message : null;
  }
  return null;
}

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
const eventId = () => `evt_${randomBytes(16).toString('hex')}`;

/** A delivery as a webhook receiver gets it: the event JSON and hubgate's signature headers. */
function delivery(secrets: string[], at = new Date()) {
  const id = eventId();
  const body = JSON.stringify({
    id,
    type: 'order.paid',
    timestamp: at.toISOString(),
    data: { orderId: 'A-1001', note: 'caf\u00e9 \u{1f511}\n  spaced' },
  });
  return { id, body, headers: signatureHeaders(id, body, secrets, at) };
}

type Delivery = ReturnType<typeof delivery>;

function verify(runner: (typeof RUNNERS)[number], path: string, key: string, d: Delivery, body = d.body) {
  const result = spawnSync(runner.command, [path], {
    input: body,
    encoding: 'utf8',
    timeout: 20_000,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      WEBHOOK_SECRET: key,
      WEBHOOK_ID: d.headers['webhook-id'],
      WEBHOOK_TIMESTAMP: d.headers['webhook-timestamp'],
      WEBHOOK_SIGNATURE: d.headers['webhook-signature'],
    },
  });
  assert.equal(result.error, undefined, `${runner.name} snippet started: ${String(result.error)}`);
  return { status: result.status, out: `${result.stdout}${result.stderr}`.trim() };
}

test('the scheme the page describes is the one hubgate signs with, and Standard Webhooks accepts it', () => {
  const key = secret();
  const d = delivery([key]);
  assert.equal(d.headers['webhook-id'], d.id, 'webhook-id is the event ID');
  assert.match(d.headers['webhook-timestamp']!, /^[0-9]+$/, 'webhook-timestamp is whole Unix seconds');
  assert.match(
    d.headers['webhook-signature']!,
    /^v1,[A-Za-z0-9+/]+={0,2}$/,
    'webhook-signature is v1,<base64>',
  );
  assert.doesNotThrow(
    () => new Webhook(key).verify(d.body, d.headers),
    'the standardwebhooks library verifies what hubgate signs',
  );
  const rotated = delivery([secret(), key]);
  assert.equal(
    rotated.headers['webhook-signature']!.split(' ').length,
    2,
    'a rotation overlap sends two space-separated signatures',
  );
  for (const phrase of ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'whsec_', 'HMAC-SHA256']) {
    assert.ok(page.includes(phrase), `${PAGE} names ${phrase}`);
  }
});

for (const runner of RUNNERS) {
  test(`the ${runner.name} snippet of ${PAGE} accepts a valid signature and refuses forgeries`, (t) => {
    const code = snippet(runner.name);
    for (const program of runner.needs) {
      const why = missing(program);
      if (why !== null) {
        const message = `${program} not found: the ${runner.name} snippet of ${PAGE} was NOT checked (${why})`;
        console.error(`!!! ${message}`);
        t.skip(message);
        return;
      }
    }
    const path = join(dir, runner.file);
    writeFileSync(path, `${code}\n`);

    const key = secret();
    const good = delivery([key]);
    const accepted = verify(runner, path, key, good);
    assert.equal(accepted.status, 0, `${runner.name}: a valid signature is accepted (${accepted.out})`);
    assert.equal(accepted.out, 'valid', `${runner.name}: prints valid`);

    const tampered = verify(runner, path, key, good, good.body.replace('A-1001', 'A-1002'));
    assert.equal(tampered.status, 1, `${runner.name}: a tampered body is refused (${tampered.out})`);
    assert.equal(tampered.out, 'invalid', `${runner.name}: prints invalid for a tampered body`);

    const trailing = verify(runner, path, key, good, `${good.body}\n`);
    assert.equal(trailing.status, 1, `${runner.name}: a body with a byte added is refused (${trailing.out})`);

    const wrongKey = verify(runner, path, secret(), good);
    assert.equal(
      wrongKey.status,
      1,
      `${runner.name}: another secret's signature is refused (${wrongKey.out})`,
    );

    const stale = delivery([key], new Date(Date.now() - 10 * 60 * 1000));
    const old = verify(runner, path, key, stale);
    assert.equal(old.status, 1, `${runner.name}: a timestamp 10 minutes old is refused (${old.out})`);

    const overlap = delivery([secret(), key]);
    const rotated = verify(runner, path, key, overlap);
    assert.equal(
      rotated.status,
      0,
      `${runner.name}: the second signature of a rotation counts (${rotated.out})`,
    );

    const unsigned = verify(runner, path, key, {
      ...good,
      headers: { ...good.headers, 'webhook-signature': '' },
    });
    assert.equal(
      unsigned.status,
      1,
      `${runner.name}: a request without a signature is refused (${unsigned.out})`,
    );
  });
}
