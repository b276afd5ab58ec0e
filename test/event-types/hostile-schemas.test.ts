import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { checkSchema, MAX_VALIDATION_WORK, validateData } from '../../src/event-types/schemas.js';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';

/**
 * A tenant's schema is hostile input (docs/api/events.md): the slowest schemas we could build under
 * the bounds, each published against with the data that costs it most. Each publish must answer
 * (202, or 400 when checking would take too long) without holding the process: `/healthz`, asked
 * meanwhile, keeps answering. The figures go to the test's diagnostics.
 */

const TYPES = '/api/v1/integrations/event-types';
const EVENTS = '/api/v1/integrations/events';

// Over this a publish or a health check is taken to have been held: MAX_VALIDATION_WORK's
// milliseconds, one keyword's work, a compile (the first publish in a process compiles), and a machine shared with
// other test files.
const HELD_MS = 1_500;

function chainOfAnyOf(depth: number) {
  const $defs: Record<string, unknown> = { [`a${depth}`]: { type: 'string' } };
  for (let i = 0; i < depth; i++) {
    $defs[`a${i}`] = { anyOf: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] };
  }
  return { $defs, $ref: '#/$defs/a0' };
}

function nested(depth: number) {
  let schema: Record<string, unknown> = { type: 'integer' };
  let data: unknown = 'not an integer';
  for (let i = 0; i < depth; i++) {
    schema = { type: 'object', properties: { a: schema } };
    data = { a: data };
  }
  return { schema, data: data as Record<string, unknown> };
}

const deep = nested(30);

const CASES: Array<{ name: string; schema: Record<string, unknown>; data: Record<string, unknown> }> = [
  // What a publish and /healthz take on this machine now, with a schema that checks nothing.
  { name: 'baseline.empty', schema: {}, data: { n: 1 } },
  { name: 'anyof.exponential', schema: chainOfAnyOf(60), data: { n: 1 } },
  { name: 'ref.to.itself', schema: { $defs: { a: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' }, data: {} },
  {
    name: 'enum.huge',
    schema: {
      properties: { xs: { items: { enum: Array.from({ length: 4_000 }, (_, i) => ({ k: i })) } } },
    },
    data: { xs: Array.from({ length: 15_000 }, () => ({ k: -1 })) },
  },
  {
    name: 'unique.items',
    schema: { properties: { xs: { uniqueItems: true } } },
    data: { xs: Array.from({ length: 20_000 }, (_, i) => ({ k: i })) },
  },
  {
    name: 'pattern.catastrophic',
    schema: { properties: { s: { pattern: '^(a+)+$' }, t: { pattern: '^(a|aa)*c$' } } },
    data: { s: `${'a'.repeat(120_000)}b`, t: 'a'.repeat(120_000) },
  },
  {
    name: 'pattern.properties.fan',
    schema: {
      patternProperties: Object.fromEntries(
        Array.from({ length: 50 }, (_, i) => [`^(k|j)${i}.*(x|y)$`, { type: 'string' }]),
      ),
    },
    data: Object.fromEntries(Array.from({ length: 8_000 }, (_, i) => [`k${i % 50}aaaaaaaaaaaa${i}`, i])),
  },
  {
    name: 'objects.many',
    schema: {
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: 99 }, (_, i) => [
          `p${i}`,
          { anyOf: [{ type: 'string', format: 'email' }, { type: 'integer' }] },
        ]),
      ),
      additionalProperties: false,
    },
    data: Object.fromEntries(Array.from({ length: 99 }, (_, i) => [`p${i}`, `${'a'.repeat(2_000)}@b`])),
  },
  { name: 'nesting.deep', schema: deep.schema, data: deep.data },
];

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

test('the slowest schemas we could build hold no publish and no other request', async (t) => {
  const { session } = await makeSignedInTenant(h);
  for (const c of CASES) {
    const savedAt = performance.now();
    const saved = await h.request('POST', TYPES, { session, body: { name: c.name, schema: c.schema } });
    const saveMs = performance.now() - savedAt;
    assert.equal(saved.status, 201, `the schema ${c.name} was refused: ${saved.text}`);

    let healthy = true;
    let slowestHealthMs = 0;
    const health = (async () => {
      while (healthy) {
        const at = performance.now();
        const r = await h.request('GET', '/healthz');
        slowestHealthMs = Math.max(slowestHealthMs, performance.now() - at);
        assert.equal(r.status, 200, `/healthz answered ${r.status} while ${c.name} was checked`);
      }
    })();
    const publishedAt = performance.now();
    const published = await h.request('POST', EVENTS, { session, body: { type: c.name, data: c.data } });
    const publishMs = performance.now() - publishedAt;
    healthy = false;
    await health;

    assert.ok(
      [202, 400].includes(published.status),
      `publishing against ${c.name} answered ${published.status}`,
    );
    t.diagnostic(
      `${c.name}: schema ${JSON.stringify(c.schema).length} B saved in ${saveMs.toFixed(0)} ms; ` +
        `publish of ${JSON.stringify(c.data).length} B answered ${published.status} in ${publishMs.toFixed(0)} ms` +
        `${published.status === 400 ? ` (${published.body.detail})` : ''}; slowest /healthz ${slowestHealthMs.toFixed(0)} ms`,
    );
    assert.ok(publishMs < HELD_MS, `publishing against ${c.name} took ${publishMs.toFixed(0)} ms`);
    assert.ok(
      slowestHealthMs < HELD_MS,
      `/healthz took ${slowestHealthMs.toFixed(0)} ms while ${c.name} was checked`,
    );
  }
  t.diagnostic(`validation work bound: ${MAX_VALIDATION_WORK} units`);
});

test('a large event under an ordinary schema is checked and accepted', async () => {
  const { session } = await makeSignedInTenant(h);
  const schema = {
    type: 'object',
    required: ['lines'],
    properties: {
      lines: {
        type: 'array',
        items: {
          type: 'object',
          required: ['sku', 'quantity'],
          properties: {
            sku: { type: 'string', pattern: '^[A-Z]{3}-[0-9]+$' },
            quantity: { type: 'integer', minimum: 1 },
            email: { type: 'string', format: 'email' },
            note: { type: 'string', pattern: 'ok$' },
          },
        },
      },
    },
  };
  const saved = await h.request('POST', TYPES, { session, body: { name: 'order.large', schema } });
  assert.equal(saved.status, 201, `an ordinary schema was refused: ${saved.text}`);
  const lines = Array.from({ length: 1_000 }, (_, i) => ({
    sku: `ABC-${i}`,
    quantity: 1 + i,
    email: 'buyer@example.com',
    note: `${'x'.repeat(40)} ok`,
  }));
  const r = await h.request('POST', EVENTS, { session, body: { type: 'order.large', data: { lines } } });
  assert.equal(
    r.status,
    202,
    `a ${JSON.stringify(lines).length}-byte event of an ordinary schema was refused: ${r.text}`,
  );
  const long = await h.request('POST', EVENTS, {
    session,
    body: {
      type: 'order.large',
      data: { lines: [{ sku: 'ABC-1', quantity: 1, note: `${'y'.repeat(200_000)} ok` }] },
    },
  });
  assert.equal(long.status, 202, `a 200,000-character string under a pattern was refused: ${long.text}`);
});

test('the bound is a count of work, not a clock: data just under it is accepted and just over it refused, every time', () => {
  // Each item costs the same (one `anyOf` of two branches): the largest array within the bound is found
  // once, then its verdict and the verdict one item over it are the same on every try, busy or not.
  const validate = checkSchema({
    properties: { xs: { items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } } },
  });
  const verdictOf = (n: number) =>
    validateData(validate, { xs: Array.from({ length: n }, () => 1) }) === undefined;
  let low = 1;
  let high = 200_000;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (verdictOf(middle)) low = middle;
    else high = middle;
  }
  assert.ok(low > 10_000, `only ${low} small items fit the bound: ordinary events would be refused`);
  for (let i = 0; i < 20; i++) {
    assert.equal(verdictOf(low), true, `the largest array within the bound was refused on try ${i}`);
    assert.equal(verdictOf(high), false, `one item over the bound was accepted on try ${i}`);
  }
  assert.deepEqual(
    validateData(validate, { xs: Array.from({ length: high }, () => 1) })?.errors,
    [{ path: '/data', message: 'is too costly to check against the event type’s schema' }],
    'the refusal does not say why at /data',
  );
});

test('a mismatch answers at most 20 errors, however many branches failed', async () => {
  const { session } = await makeSignedInTenant(h);
  // Every branch of this chain fails, each with its own error: 8,191 of them without the cap.
  const saved = await h.request('POST', TYPES, {
    session,
    body: { name: 'anyof.errors', schema: chainOfAnyOf(12) },
  });
  assert.equal(saved.status, 201, saved.text);
  const r = await h.request('POST', EVENTS, { session, body: { type: 'anyof.errors', data: { n: 1 } } });
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.errors.length, 20, `a mismatch answered ${r.body.errors.length} errors`);
  const batch = await h.request('POST', `${EVENTS}/batch`, {
    session,
    body: { events: Array.from({ length: 100 }, () => ({ type: 'anyof.errors', data: { n: 1 } })) },
  });
  assert.equal(batch.status, 202, batch.text);
  assert.ok(batch.text.length < 1_000_000, `a batch of 100 mismatches answered ${batch.text.length} bytes`);
});

test('a batch of events each at the bound never holds other requests for long', async (t) => {
  const { session } = await makeSignedInTenant(h);
  const saved = await h.request('POST', TYPES, {
    session,
    body: { name: 'anyof.batch', schema: chainOfAnyOf(60) },
  });
  assert.equal(saved.status, 201, saved.text);
  let checking = true;
  let slowestHealthMs = 0;
  const health = (async () => {
    while (checking) {
      const at = performance.now();
      const r = await h.request('GET', '/healthz');
      slowestHealthMs = Math.max(slowestHealthMs, performance.now() - at);
      assert.equal(r.status, 200, `/healthz answered ${r.status} during the batch`);
    }
  })();
  const at = performance.now();
  const batch = await h.request('POST', `${EVENTS}/batch`, {
    session,
    body: { events: Array.from({ length: 100 }, () => ({ type: 'anyof.batch', data: { n: 1 } })) },
  });
  const batchMs = performance.now() - at;
  checking = false;
  await health;
  assert.equal(batch.status, 202, batch.text);
  assert.ok(
    batch.body.data.every((item: { error?: { code: string } }) => item.error?.code === 'validation_failed'),
    'an item at the bound was not refused as too costly',
  );
  t.diagnostic(
    `batch of 100 at the bound: ${batchMs.toFixed(0)} ms; slowest /healthz meanwhile ${slowestHealthMs.toFixed(0)} ms`,
  );
  // Without giving the loop back, /healthz would wait for the whole batch (about 100 × the bound).
  assert.ok(
    slowestHealthMs < batchMs / 3,
    `/healthz took ${slowestHealthMs.toFixed(0)} ms of the batch's ${batchMs.toFixed(0)} ms`,
  );
});
