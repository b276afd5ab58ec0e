import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';

/**
 * Issue 37, item 1, from the attacker's side: a schema whose patterns compile to thousands of RE2
 * states, or whose `format` is checked by a backtracking regular expression, held the whole process
 * for seconds on one publish (95 s for one 250,000-character string under
 * `.{1,1000}.{1,1000}.{1,1000}!`, 18 s for 50 patterns of `[a-z]{1,1000}[0-9]{1,1000}[A-Z]{1,1000}`
 * against 3,000-character strings, 47.9 s for 256 KB under `format: "url"`). Such patterns are refused
 * when saved; what is accepted at the bound, and every format, must leave `/healthz` answering while
 * the worst data is published (docs/decisions/0061-pattern-size-and-format-cost.md).
 */

const TYPES = '/api/v1/integrations/event-types';
const EVENTS = '/api/v1/integrations/events';

// The longest `/healthz` may wait while a hostile publish is checked. Generous for a machine of 2 cores
// shared with other test files; before the fix the same publishes held it for seconds to minutes.
const MAX_GAP_MS = 500;

let h: Harness;
let session: TestSession;
before(async () => {
  h = await startHarness();
  ({ session } = await makeSignedInTenant(h));
});
after(() => h.close());

/**
 * Runs `work` while `/healthz` is asked over and over on the real port; returns the longest a health
 * check waited. At least one check must have answered while the work ran (the sampler started).
 */
async function longestHealthGap<T>(work: () => Promise<T>): Promise<{ result: T; gapMs: number }> {
  let running = true;
  let gapMs = 0;
  let answered = 0;
  const sampler = (async () => {
    while (running) {
      const at = performance.now();
      const r = await fetch(`${h.baseUrl}/healthz`);
      await r.arrayBuffer();
      gapMs = Math.max(gapMs, performance.now() - at);
      assert.equal(r.status, 200, `/healthz answered ${r.status}`);
      answered += 1;
    }
  })();
  try {
    return { result: await work(), gapMs };
  } finally {
    running = false;
    await sampler;
    assert.ok(answered > 0, 'the /healthz sampler never answered');
  }
}

async function saveType(name: string, schema: Record<string, unknown>) {
  const saved = await h.request('POST', TYPES, { session, body: { name, schema } });
  assert.equal(saved.status, 201, `the schema ${name} was refused: ${saved.text}`);
}

test('a pattern compiled to more RE2 states than the bound is refused when saved, naming where it is', async () => {
  const cases: Array<{ schema: Record<string, unknown>; path: string }> = [
    {
      schema: { properties: { s: { type: 'string', pattern: '.{1,1000}.{1,1000}.{1,1000}!' } } },
      path: 'schema.properties.s.pattern',
    },
    {
      schema: { patternProperties: { '[a-z]{1,1000}[0-9]{1,1000}[A-Z]{1,1000}': { type: 'string' } } },
      path: 'schema.patternProperties',
    },
    {
      schema: { properties: { s: { pattern: '[a-z]{1,1000}[0-9]{1,1000}[A-Z]{1,1000}' } } },
      path: 'schema.properties.s.pattern',
    },
  ];
  for (const [i, c] of cases.entries()) {
    for (const [method, path] of [
      ['POST', TYPES],
      ['PATCH', `${TYPES}/big.${i}`],
    ] as const) {
      if (method === 'PATCH') await saveType(`big.${i}`, {});
      const body = method === 'POST' ? { name: `big.new.${i}`, schema: c.schema } : { schema: c.schema };
      const r = await h.request(method, path, { session, body });
      assert.equal(r.status, 400, `${method} of ${JSON.stringify(c.schema)} answered ${r.status}`);
      assert.equal(r.body.code, 'validation_failed', r.text);
      assert.equal(r.body.errors[0].path, c.path, r.text);
      assert.match(r.body.errors[0].message, /RE2 instructions/, r.text);
    }
  }
  // The type was not created, and the one patched kept its schema.
  const created = await h.request('GET', `${TYPES}/big.new.0`, { session });
  assert.equal(created.status, 404, 'a refused type was created');
  const patched = await h.request('GET', `${TYPES}/big.0`, { session });
  assert.deepEqual(patched.body.schema, {}, 'a refused schema replaced the saved one');
});

// Deterministic noise (a linear congruential generator), so that every run publishes the same data.
function noise(length: number, alphabet: string, seed = 1): string {
  let x = seed;
  let out = '';
  for (let i = 0; i < length; i++) {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    out += alphabet[(x >>> 16) % alphabet.length];
  }
  return out;
}

/** Runs of letters and digits of 1–160 characters: a new DFA state at almost every character. */
function runs(length: number, seed: number): string {
  let x = seed;
  let out = '';
  for (let i = 0; out.length < length; i++) {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    out += (i % 2 ? '1' : 'a').repeat(1 + ((x >>> 16) % 160));
  }
  return out.slice(0, length);
}

test('one 250,000-character string under the largest patterns accepted holds no other request', async (t) => {
  await saveType('pattern.dots', {
    properties: {
      s: { type: 'string', pattern: '.{1,160}.{1,160}.{1,160}!' },
      // Its DFA needs a state per window of 300 characters: it gives up and the NFA runs every state.
      t: { type: 'string', pattern: '[ab]*a[ab]{300}c' },
    },
  });
  const cases = [{ s: `${`${'x'.repeat(400)}\n`.repeat(620)}!` }, { t: `${noise(250_000, 'ab')}\nc` }];
  for (const data of cases) {
    const { result, gapMs } = await longestHealthGap(() =>
      h.request('POST', EVENTS, { session, body: { type: 'pattern.dots', data } }),
    );
    t.diagnostic(
      `${Object.keys(data).join()}: publish answered ${result.status} (${result.body.detail ?? ''}); longest /healthz ${gapMs.toFixed(0)} ms`,
    );
    assert.ok([202, 400].includes(result.status), result.text);
    assert.ok(gapMs < MAX_GAP_MS, `/healthz waited ${gapMs.toFixed(0)} ms behind one publish`);
  }
});

test('50 patterns, or 10 at the size bound, against 3,000-character strings hold no other request, single or batched', async (t) => {
  // A schema's patterns compile to at most 10,000 instructions together: 50 of ~170, or 10 of ~930.
  const shapes = [
    { name: 'pattern.fifty', count: 50, pattern: (i: number) => `[a-z]{1,30}[0-9]{1,30}[A-Z]{1,${i + 1}}` },
    { name: 'pattern.ten', count: 10, pattern: (i: number) => `[a-z]{1,160}[0-9]{1,160}[A-Z]{1,${140 + i}}` },
  ];
  for (const shape of shapes) {
    const properties: Record<string, unknown> = {};
    const data: Record<string, string> = {};
    for (let i = 0; i < shape.count; i++) {
      // Each pattern its own (ajv would share one compiled pattern between equal ones). A match only at
      // the very end: every pattern runs over every character (the check stops at the first property
      // that does not match).
      properties[`p${i}`] = { type: 'string', pattern: shape.pattern(i) };
      data[`p${i}`] = `${runs(2_997, i + 1)}a1A`;
    }
    await saveType(shape.name, { type: 'object', properties });
    const single = await longestHealthGap(() =>
      h.request('POST', EVENTS, { session, body: { type: shape.name, data } }),
    );
    t.diagnostic(
      `${shape.name} single: ${single.result.status}; longest /healthz ${single.gapMs.toFixed(0)} ms`,
    );
    assert.ok([202, 400].includes(single.result.status), single.result.text);
    assert.ok(single.gapMs < MAX_GAP_MS, `/healthz waited ${single.gapMs.toFixed(0)} ms behind one publish`);

    const batch = await longestHealthGap(() =>
      h.request('POST', `${EVENTS}/batch`, {
        session,
        body: { events: Array.from({ length: 5 }, () => ({ type: shape.name, data })) },
      }),
    );
    t.diagnostic(
      `${shape.name} batch of 5: ${batch.result.status}; longest /healthz ${batch.gapMs.toFixed(0)} ms`,
    );
    assert.equal(batch.result.status, 202, batch.result.text);
    assert.ok(batch.gapMs < MAX_GAP_MS, `/healthz waited ${batch.gapMs.toFixed(0)} ms behind one batch`);
  }
});

test('a schema whose patterns are too large together, or one pattern of a million instructions, is refused without holding the process', async (t) => {
  const eleven = Object.fromEntries(
    Array.from({ length: 11 }, (_, i) => [
      `p${i}`,
      { pattern: `[a-z]{1,160}[0-9]{1,160}[A-Z]{1,${140 + i}}` },
    ]),
  );
  const together = await h.request('POST', TYPES, {
    session,
    body: { name: 'pattern.eleven', schema: { properties: eleven } },
  });
  assert.equal(together.status, 400, together.text);
  assert.equal(together.body.errors[0].path, 'schema.properties.p10.pattern', together.text);
  // RE2 accepts this (599,702 instructions); compiling it took 3 s, and 20 of them fit in 64 KiB.
  const huge = '.{1,1000}'.repeat(300);
  const { result, gapMs } = await longestHealthGap(() =>
    h.request('POST', TYPES, {
      session,
      body: {
        name: 'pattern.huge',
        schema: {
          properties: Object.fromEntries(
            Array.from({ length: 20 }, (_, i) => [`p${i}`, { pattern: `${huge}${i}` }]),
          ),
        },
      },
    }),
  );
  t.diagnostic(
    `20 patterns of 600,000 instructions: ${result.status}; longest /healthz ${gapMs.toFixed(0)} ms`,
  );
  assert.equal(result.status, 400, result.text.slice(0, 300));
  assert.match(result.body.errors[0].message, /RE2 instructions/, result.text.slice(0, 300));
  assert.ok(gapMs < MAX_GAP_MS, `/healthz waited ${gapMs.toFixed(0)} ms behind saving the schema`);
});

// For each format, a string of 250,000 characters (data is at most 256 KiB) built to be slow for the check ajv-formats ships (the
// fuzzing's worst shapes), and one that must stay valid.
const HOSTILE = 250_000;
const hostileOf = (prefix: string, unit: string, suffix: string, size = HOSTILE) =>
  prefix + unit.repeat(Math.ceil((size - prefix.length - suffix.length) / unit.length)) + suffix;

const FORMAT_CASES: Array<{ format: string; hostile: string[]; valid: string }> = [
  {
    format: 'url',
    hostile: [hostileOf('http://1.1', ':', '!'), hostileOf('http://a', '.a-a', ' ')],
    valid: 'https://example.com/a?b=c',
  },
  {
    format: 'uri',
    hostile: [hostileOf('a:', '-', '\n'), hostileOf('http://a@', 'A', ' ')],
    valid: 'urn:isbn:1',
  },
  { format: 'uri-reference', hostile: [hostileOf('', 'http://a', ' ')], valid: '../a/b?c' },
  { format: 'uri-template', hostile: [hostileOf('http://', '{a', ' ')], valid: 'https://x/{id}' },
  {
    format: 'email',
    hostile: [hostileOf('a@', 'a1.', '!'), hostileOf('', 'a', '!')],
    valid: 'a.b@example.com',
  },
  { format: 'hostname', hostile: [hostileOf('', 'a-', '!')], valid: 'api.example.com' },
  {
    format: 'date-time',
    hostile: [hostileOf('urn:uuid:', ' ', '@'), hostileOf('2020-01-01T00:00:00.', '1', 'Z!')],
    valid: '2026-12-07T05:00:00Z',
  },
  { format: 'iso-date-time', hostile: [hostileOf('http://a-', ' ', '.')], valid: '2026-12-07 05:00:00' },
  { format: 'date', hostile: [hostileOf('', '1', '')], valid: '2026-12-07' },
  { format: 'time', hostile: [hostileOf('00:00:00.', '1', 'Z!')], valid: '05:00:00Z' },
  { format: 'duration', hostile: [hostileOf('P', '0', '\n')], valid: 'P1DT2H' },
  { format: 'ipv4', hostile: [hostileOf('', '1.', '')], valid: '192.0.2.1' },
  { format: 'ipv6', hostile: [hostileOf('', '1:', '')], valid: '2001:db8::1' },
  {
    format: 'uuid',
    hostile: [hostileOf('urn:uuid:', 'a', '')],
    valid: '3f2504e0-4f89-11d3-9a0c-0305e82c3301',
  },
  { format: 'regex', hostile: [hostileOf('', '(a|', '')], valid: '^a+$' },
  { format: 'json-pointer', hostile: [hostileOf('', '/~', '')], valid: '/a/b~1c' },
  { format: 'json-pointer-uri-fragment', hostile: [hostileOf('#', '/%', '')], valid: '#/a' },
  { format: 'relative-json-pointer', hostile: [hostileOf('1', '/a', '~')], valid: '1/a' },
  // `\n` is two bytes in JSON: 200,000 characters stay within the 256 KiB of data.
  { format: 'byte', hostile: [hostileOf('', 'aaa\n', '!', 200_000)], valid: 'aGk=' },
];

test('every format: 250,000 characters built against its check holds no other request, and valid values still pass', async (t) => {
  for (const c of FORMAT_CASES) {
    const name = `format.${c.format}`;
    await saveType(name, { properties: { v: { type: 'string', format: c.format } } });
    const valid = await h.request('POST', EVENTS, { session, body: { type: name, data: { v: c.valid } } });
    assert.equal(valid.status, 202, `${c.format}: ${JSON.stringify(c.valid)} was refused: ${valid.text}`);
    for (const v of c.hostile) {
      const { result, gapMs } = await longestHealthGap(() =>
        h.request('POST', EVENTS, { session, body: { type: name, data: { v } } }),
      );
      t.diagnostic(
        `${c.format} ${JSON.stringify(v.slice(0, 12))}…: ${result.status}; longest /healthz ${gapMs.toFixed(0)} ms`,
      );
      assert.ok(
        [202, 400].includes(result.status),
        `${c.format}: ${result.status} ${result.text.slice(0, 300)}`,
      );
      assert.ok(gapMs < MAX_GAP_MS, `/healthz waited ${gapMs.toFixed(0)} ms behind one ${c.format} publish`);
    }
  }
});

test('a batch of 100 events under format "url" holds no other request', async (t) => {
  await saveType('format.url.batch', { properties: { v: { type: 'string', format: 'url' } } });
  // 100 events of ~9 KB fill the 1 MiB body; before the fix each took ~24 ms, 2.4 s in one go.
  const v = hostileOf('http://1.1', ':', '!', 9_000);
  const { result, gapMs } = await longestHealthGap(() =>
    h.request('POST', `${EVENTS}/batch`, {
      session,
      body: { events: Array.from({ length: 100 }, () => ({ type: 'format.url.batch', data: { v } })) },
    }),
  );
  t.diagnostic(`batch of 100 url events: ${result.status}; longest /healthz ${gapMs.toFixed(0)} ms`);
  assert.equal(result.status, 202, result.text.slice(0, 300));
  assert.ok(
    result.body.data.every((item: { error?: { code: string } }) => item.error?.code === 'validation_failed'),
    'an invalid URL was accepted',
  );
  assert.ok(gapMs < MAX_GAP_MS, `/healthz waited ${gapMs.toFixed(0)} ms behind the batch`);
});
