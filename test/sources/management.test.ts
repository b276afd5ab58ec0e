import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { assertNoLeak, makeKey, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { githubSignature } from './signers.js';

// The management routes of sources (contract §22) and the ingest URL's protections: write-only
// secrets, scopes and tenants, pause, delete, rate, the request log and its cap, and §14's answers
// to oversized, non-JSON, deeply nested and schema-breaking bodies.

const SOURCES = '/api/v1/integrations/sources';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const create = (session: TestSession, body: Record<string, unknown>) =>
  h.request('POST', SOURCES, { session, body: { name: 'a source', ...body } });

async function githubSource(session: TestSession, extra: Record<string, unknown> = {}) {
  const secret = `gh-${randomUUID()}`;
  const r = await create(session, { scheme: 'github', secret, ...extra });
  assert.equal(r.status, 201, `creating a github source answered ${r.status}: ${r.text}`);
  return { id: r.body.id as string, secret };
}

/** A GitHub delivery of `body` (an object, or exact text), signed with `secret` unless told otherwise. */
function github(
  secret: string,
  body: unknown,
  options: { event?: string; id?: string; signature?: string; headers?: Record<string, string> } = {},
) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return {
    body: text,
    headers: {
      'x-github-event': options.event ?? 'push',
      'x-github-delivery': options.id ?? randomUUID(),
      'x-hub-signature-256': options.signature ?? githubSignature(secret, text),
      ...options.headers,
    },
  };
}

const send = (
  sourceId: string,
  delivery: { body: string; headers: Record<string, string> },
  contentType = 'application/json',
) =>
  h.request('POST', `/ingest/${sourceId}`, {
    rawBody: delivery.body,
    headers: { 'content-type': contentType, ...delivery.headers },
  });

interface LoggedRequest {
  id: string;
  outcome: string;
  eventId: string | null;
  providerDeliveryId: string | null;
  eventType: string | null;
  headers: Record<string, string>;
  body: string;
  bodyTruncated: boolean;
  receivedAt: string;
}

async function requestLog(session: TestSession, sourceId: string, query = ''): Promise<LoggedRequest[]> {
  const r = await h.request('GET', `${SOURCES}/${sourceId}/requests?limit=100${query}`, { session });
  assert.equal(r.status, 200, `reading the request log answered ${r.status}: ${r.text}`);
  return r.body.data;
}

async function ingestCount(outcome: string): Promise<number> {
  const r = await h.request('GET', '/metrics', { token: h.platformToken });
  assert.equal(r.status, 200, r.text);
  const match = new RegExp(`^hubgate_ingest_requests_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(
    r.text,
  );
  return Number(match?.[1] ?? 0);
}

describe('sources: who may do what', () => {
  test('a READER key reads sources and the log but cannot write: 403 insufficient_scope', async () => {
    const { session } = await makeSignedInTenant(h);
    const source = await githubSource(session);
    const key = await makeKey(h, session, { scopes: ['integrations:READER'] });
    const token = key.secret;
    assert.equal((await h.request('GET', SOURCES, { token })).status, 200, 'a READER cannot list');
    assert.equal(
      (await h.request('GET', `${SOURCES}/${source.id}`, { token })).status,
      200,
      'a READER cannot read',
    );
    assert.equal(
      (await h.request('GET', `${SOURCES}/${source.id}/requests`, { token })).status,
      200,
      'a READER cannot read the log',
    );
    const writes: Array<[string, string, unknown]> = [
      ['POST', SOURCES, { name: 'x', scheme: 'github', secret: 'abcdefgh1' }],
      ['PATCH', `${SOURCES}/${source.id}`, { status: 'paused' }],
      ['DELETE', `${SOURCES}/${source.id}`, undefined],
      ['POST', `${SOURCES}/${source.id}/rotate-secret`, { secret: 'a new secret value' }],
    ];
    for (const [method, path, body] of writes) {
      const r = await h.request(method, path, { token, body });
      assert.equal(r.status, 403, `${method} ${path} with a READER key answered ${r.status}`);
      assert.equal(r.body.code, 'insufficient_scope', r.text);
    }
    assert.equal(
      (await h.request('GET', `${SOURCES}/${source.id}`, { session })).body.status,
      'active',
      'a refused write changed the source',
    );
  });

  test('another tenant’s source is 404 on every route', async () => {
    const { session } = await makeSignedInTenant(h);
    const other = await makeSignedInTenant(h);
    const source = await githubSource(session);
    const routes: Array<[string, string, unknown]> = [
      ['GET', `${SOURCES}/${source.id}`, undefined],
      ['PATCH', `${SOURCES}/${source.id}`, { status: 'paused' }],
      ['DELETE', `${SOURCES}/${source.id}`, undefined],
      ['POST', `${SOURCES}/${source.id}/rotate-secret`, { secret: 'a new secret value' }],
      ['GET', `${SOURCES}/${source.id}/requests`, undefined],
    ];
    for (const [method, path, body] of routes) {
      const r = await h.request(method, path, { session: other.session, body });
      assert.equal(r.status, 404, `${method} ${path} from another tenant answered ${r.status}`);
    }
    const list = await h.request('GET', SOURCES, { session: other.session });
    assert.deepEqual(list.body.data, [], 'another tenant lists the source');
    assert.equal(
      (await send(source.id, github(source.secret, { ref: 'x' }))).status,
      202,
      'the attempts changed the source',
    );
  });

  test('a tenant without integrations has no sources: its ingest URL answers 404', async () => {
    const { session, tenant } = await makeSignedInTenant(h);
    const source = await githubSource(session);
    const r = await h.request('PUT', `/api/v1/platform/tenants/${tenant.id}/entitlements`, {
      token: h.platformToken,
      body: { entitlements: ['integration_hub'] },
    });
    assert.equal(r.status, 200, r.text);
    await waitForStatus(source.id, github(source.secret, { ref: 'x' }), 404);
  });
});

/** Sends until the answer is `status`: the ingest route keeps a source 0.5 s (a process edits elsewhere). */
async function waitForStatus(sourceId: string, delivery: ReturnType<typeof github>, status: number) {
  const deadline = Date.now() + 3_000;
  for (;;) {
    const r = await send(sourceId, {
      ...delivery,
      headers: { ...delivery.headers, 'x-github-delivery': randomUUID() },
    });
    if (r.status === status) return r;
    assert.ok(Date.now() < deadline, `the ingest URL still answers ${r.status}, not ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('sources: create, read, edit, rotate, delete', () => {
  test('the life of a source, with the contract’s codes and shapes, audited, its secret never shown', async () => {
    const { session } = await makeSignedInTenant(h);
    const secret = `whsec_${randomUUID()}`;
    const created = await create(session, {
      name: 'Stripe live',
      scheme: 'stripe',
      secret,
      maxPerSecond: 20,
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id as string;
    assert.match(id, /^src_/, 'the ID is not a source ID');
    assert.deepEqual(
      {
        ...created.body,
        id: 'ID',
        createdAt: 'T',
        updatedAt: 'T',
      },
      {
        id: 'ID',
        name: 'Stripe live',
        scheme: 'stripe',
        typePrefix: 'stripe',
        ingestUrl: new URL(`/ingest/${id}`, h.config.publicUrl).href,
        status: 'active',
        maxPerSecond: 20,
        createdAt: 'T',
        updatedAt: 'T',
        previousSecretValidUntil: null,
      },
      'the created source is not the contract’s shape (or shows the given secret)',
    );
    const read = await h.request('GET', `${SOURCES}/${id}`, { session });
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.body, created.body, 'the source reads back otherwise');
    const list = await h.request('GET', SOURCES, { session });
    assert.deepEqual(list.body, { data: [created.body], nextCursor: null }, 'the list is not the one source');

    const patched = await h.request('PATCH', `${SOURCES}/${id}`, {
      session,
      body: { name: 'Stripe (live)', typePrefix: 'billing', maxPerSecond: 5 },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.name, 'Stripe (live)', 'the name was not changed');
    assert.equal(patched.body.typePrefix, 'billing', 'the prefix was not changed');
    assert.equal(patched.body.maxPerSecond, 5, 'the rate was not changed');

    const rotated = await h.request('POST', `${SOURCES}/${id}/rotate-secret`, {
      session,
      body: { secret: `whsec_${randomUUID()}`, previousValidForSeconds: 60 },
    });
    assert.equal(rotated.status, 200, rotated.text);
    assert.equal(rotated.body.secret, undefined, 'a secret given was shown back');
    assert.ok(rotated.body.previousSecretValidUntil, 'the overlap is not told');

    const deleted = await h.request('DELETE', `${SOURCES}/${id}`, { session });
    assert.equal(deleted.status, 204, deleted.text);
    assert.equal(
      (await h.request('GET', `${SOURCES}/${id}`, { session })).status,
      404,
      'a deleted source reads',
    );
    assert.equal((await h.request('DELETE', `${SOURCES}/${id}`, { session })).status, 404, 'deleted twice');
    const gone = await send(id, github(secret, {}));
    assert.equal(gone.status, 404, `a deleted source’s ingest URL answered ${gone.status}`);

    const audit = await h.request('GET', '/api/v1/company/audit-log', { session });
    const actions = (audit.body.data as Array<{ action: string; targetId: string }>)
      .filter((e) => e.targetId === id)
      .map((e) => e.action)
      .sort();
    assert.deepEqual(
      actions,
      ['source.create', 'source.delete', 'source.rotate_secret', 'source.update'],
      'a change to a source is not audited',
    );
    assertNoLeak(
      h,
      [secret, rotated.body.secret ?? 'never'].filter((s) => s !== 'never'),
    );
  });

  test('standard-webhooks makes a secret when none is given, shown once; other schemes never make one', async () => {
    const { session } = await makeSignedInTenant(h);
    const made = await create(session, { scheme: 'standard-webhooks' });
    assert.equal(made.status, 201, made.text);
    const secret = made.body.secret as string;
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'the made secret is not whsec_ and 32 bytes');
    const given = await create(session, {
      scheme: 'standard-webhooks',
      secret: `whsec_${Buffer.alloc(24, 3).toString('base64')}`,
    });
    assert.equal(given.status, 201, given.text);
    assert.equal(given.body.secret, undefined, 'a given secret was shown back');
    await h.request('GET', `${SOURCES}/${made.body.id}`, { session });
    await h.request('GET', SOURCES, { session });
    assertNoLeak(h, [], [secret]);
    for (const scheme of ['stripe', 'github', 'slack', 'shopify']) {
      const r = await create(session, { scheme });
      assert.equal(r.status, 400, `a ${scheme} source without a secret answered ${r.status}`);
      assert.equal(r.body.code, 'validation_failed', r.text);
    }
    const bad = await create(session, { scheme: 'standard-webhooks', secret: 'not-a-whsec-secret' });
    assert.equal(bad.status, 400, `a standard-webhooks secret without whsec_ answered ${bad.status}`);
  });

  test('hmac fields: required by hmac, refused for other schemes; unknown scheme, bad prefix, bad rate refused', async () => {
    const { session } = await makeSignedInTenant(h);
    const refused: Array<[string, Record<string, unknown>]> = [
      ['hmac without signatureHeader', { scheme: 'hmac', secret: 'abcdefgh', encoding: 'hex' }],
      ['hmac without encoding', { scheme: 'hmac', secret: 'abcdefgh', signatureHeader: 'X-Sig' }],
      [
        'hmac with encoding base32',
        { scheme: 'hmac', secret: 'abcdefgh', signatureHeader: 'X-Sig', encoding: 'base32' },
      ],
      [
        'hmac with a header name with a colon',
        { scheme: 'hmac', secret: 'abcdefgh', signatureHeader: 'X:Sig', encoding: 'hex' },
      ],
      [
        'stripe with signatureHeader',
        { scheme: 'stripe', secret: 'whsec_abcdefgh', signatureHeader: 'X-Sig' },
      ],
      ['github with typePath', { scheme: 'github', secret: 'abcdefgh', typePath: 'a.b' }],
      ['an unknown scheme', { scheme: 'paypal', secret: 'abcdefgh' }],
      ['an upper-case prefix', { scheme: 'github', secret: 'abcdefgh', typePrefix: 'GitHub' }],
      ['a prefix with a dot', { scheme: 'github', secret: 'abcdefgh', typePrefix: 'a.b' }],
      ['maxPerSecond 0', { scheme: 'github', secret: 'abcdefgh', maxPerSecond: 0 }],
      ['maxPerSecond 1001', { scheme: 'github', secret: 'abcdefgh', maxPerSecond: 1001 }],
      ['a name of 101 characters', { scheme: 'github', secret: 'abcdefgh', name: 'x'.repeat(101) }],
      ['an unknown field', { scheme: 'github', secret: 'abcdefgh', url: 'https://example.com' }],
    ];
    for (const [what, body] of refused) {
      const r = await create(session, body);
      assert.equal(r.status, 400, `${what} answered ${r.status}: ${r.text}`);
      assert.equal(r.body.code, 'validation_failed', `${what}: ${r.text}`);
    }
    const ok = await create(session, {
      scheme: 'hmac',
      secret: 'abcdefgh',
      signatureHeader: 'X-Sig',
      encoding: 'hex',
    });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.signatureHeader, 'X-Sig', 'the hmac fields are not shown');
    const patched = await h.request('PATCH', `${SOURCES}/${ok.body.id}`, {
      session,
      body: { encoding: 'base64' },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.encoding, 'base64', 'an hmac field was not edited');
    const github = await githubSource(session);
    const wrong = await h.request('PATCH', `${SOURCES}/${github.id}`, {
      session,
      body: { signatureHeader: 'X-Sig' },
    });
    assert.equal(wrong.status, 400, `an hmac field on a github source answered ${wrong.status}`);
    assert.equal(
      (await h.request('GET', `${SOURCES}/${github.id}`, { session })).body.signatureHeader,
      undefined,
      'the refused field was kept',
    );
  });
});

describe('the ingest URL’s protections', () => {
  test('an ID that is no source, or of no source: 404 without a word about why', async () => {
    for (const id of ['nothing', 'src_', `src_${'A'.repeat(22)}`, 'evt_123']) {
      const r = await send(id, github('x', {}));
      assert.equal(r.status, 404, `/ingest/${id} answered ${r.status}`);
    }
  });

  test('a paused source: 503 with Retry-After, nothing published; resumed, it publishes', async () => {
    const { session } = await makeSignedInTenant(h);
    const source = await githubSource(session);
    const paused = await h.request('PATCH', `${SOURCES}/${source.id}`, {
      session,
      body: { status: 'paused' },
    });
    assert.equal(paused.status, 200, paused.text);
    assert.equal(paused.body.status, 'paused', 'the source is not paused');
    const r = await send(source.id, github(source.secret, { ref: 'main' }));
    assert.equal(r.status, 503, `a paused source answered ${r.status}`);
    assert.ok(Number(r.headers.get('retry-after')) > 0, 'a pause has no Retry-After');
    const resumed = await h.request('PATCH', `${SOURCES}/${source.id}`, {
      session,
      body: { status: 'active' },
    });
    assert.equal(resumed.status, 200, resumed.text);
    assert.equal(
      (await send(source.id, github(source.secret, { ref: 'main' }))).status,
      202,
      'a resumed source refuses',
    );
    const outcomes = (await requestLog(session, source.id)).map((e) => e.outcome);
    assert.deepEqual(outcomes, ['accepted', 'paused'], 'the log does not say what happened');
  });

  test('over maxPerSecond: 429 with Retry-After, before the signature is even checked', async (t) => {
    const { session } = await makeSignedInTenant(h);
    const source = await githubSource(session, { maxPerSecond: 2 });
    // One second of the app's clock for every request.
    h.setNow(new Date(Math.floor(Date.now() / 1000) * 1000 + 500));
    t.after(() => h.setNow(null));
    const answers: number[] = [];
    for (let i = 0; i < 4; i++) answers.push((await send(source.id, github(source.secret, { n: i }))).status);
    assert.deepEqual(answers, [202, 202, 429, 429], 'the per-second limit does not hold');
    const unsigned = await send(source.id, github('wrong', { n: 9 }));
    assert.equal(unsigned.status, 429, 'a forged request over the rate reached the signature check');
    assert.ok(Number(unsigned.headers.get('retry-after')) >= 1, 'a 429 has no Retry-After');
    // Every 429 names its limit (docs/api/rate-limits.md): the source's requests a second.
    assert.match(
      unsigned.headers.get('ratelimit-policy') ?? '',
      /^"source";q=\d+;w=1$/,
      "the 429 has no RateLimit-Policy of the source's limit",
    );
    assert.match(unsigned.headers.get('ratelimit') ?? '', /^"source";r=0;t=\d+$/, 'the 429 has no RateLimit');
    h.setNow(new Date(Date.now() + 5_000));
    assert.equal(
      (await send(source.id, github(source.secret, { n: 10 }))).status,
      202,
      'the next second is refused',
    );
  });

  test('413 over 1 MiB, 415 for non-JSON, 400 for JSON nested too deep (once signed), 401 before any parse', async () => {
    const { session } = await makeSignedInTenant(h);
    const source = await githubSource(session);
    const big = JSON.stringify({ pad: 'x'.repeat(1024 * 1024) });
    const tooBig = await send(source.id, github(source.secret, big));
    assert.equal(tooBig.status, 413, `a body over 1 MiB answered ${tooBig.status}`);
    assert.equal(tooBig.body.code, 'payload_too_large', tooBig.text);
    const form = 'payload=%7B%7D';
    const notJson = await send(source.id, github(source.secret, form), 'application/x-www-form-urlencoded');
    assert.equal(notJson.status, 415, `a form body answered ${notJson.status}`);
    const text = await send(source.id, github(source.secret, '{}'), 'text/plain');
    assert.equal(text.status, 415, `a text/plain body answered ${text.status}`);
    const deep = `{"a":${'['.repeat(200)}${']'.repeat(200)}}`;
    const nested = await send(source.id, github(source.secret, deep));
    assert.equal(nested.status, 400, `JSON nested 200 deep answered ${nested.status}: ${nested.text}`);
    const unsignedDeep = await send(source.id, github('wrong', deep));
    assert.equal(unsignedDeep.status, 401, 'an unsigned body was parsed before its signature was checked');
    const broken = await send(source.id, github(source.secret, '{"a":'));
    assert.equal(broken.status, 400, `signed broken JSON answered ${broken.status}`);
    const array = await send(source.id, github(source.secret, '[1,2]'));
    assert.equal(array.status, 400, `a signed JSON array answered ${array.status}`);
    const outcomes = (await requestLog(session, source.id)).map((e) => e.outcome);
    assert.deepEqual(
      outcomes,
      ['rejected', 'rejected', 'invalid_signature', 'rejected'],
      'the refused bodies are not logged as rejected',
    );
  });

  test('an event-type schema mismatch: 400 validation_failed, logged rejected, the delivery ID released for a corrected retry', async () => {
    const { session } = await makeSignedInTenant(h);
    const source = await githubSource(session);
    const type = await h.request('POST', '/api/v1/integrations/event-types', {
      session,
      body: {
        name: 'github.push',
        schema: { type: 'object', required: ['ref'], properties: { ref: { type: 'string' } } },
      },
    });
    assert.equal(type.status, 201, type.text);
    const id = randomUUID();
    const bad = await send(source.id, github(source.secret, { ref: 42 }, { id }));
    assert.equal(bad.status, 400, `a body against the schema answered ${bad.status}: ${bad.text}`);
    assert.equal(bad.body.code, 'validation_failed', bad.text);
    const [logged] = await requestLog(session, source.id);
    assert.equal(logged?.outcome, 'rejected', 'a schema mismatch is not logged as rejected');
    assert.equal(logged?.providerDeliveryId, id, 'the rejected delivery ID is not logged');
    const good = await send(source.id, github(source.secret, { ref: 'refs/heads/main' }, { id }));
    assert.equal(
      good.status,
      202,
      `the corrected retry of a refused delivery answered ${good.status}: ${good.text}`,
    );
    const again = await send(source.id, github(source.secret, { ref: 'refs/heads/main' }, { id }));
    assert.deepEqual(
      again.body,
      { id: good.body.id, duplicate: true },
      'the published retry is not de-duplicated',
    );
  });
});

describe('the request log', () => {
  test('outcomes, redacted signatures, the first 4 KiB, filters and the cursor', async (t) => {
    const { session } = await makeSignedInTenant(h);
    const source = await githubSource(session);
    const t0 = new Date(Date.now() - 3_600_000);
    h.setNow(t0);
    t.after(() => h.setNow(null));
    const id = randomUUID();
    const first = await send(source.id, github(source.secret, { ref: 'a' }, { id }));
    assert.equal(first.status, 202, first.text);
    h.setNow(new Date(t0.getTime() + 60_000));
    assert.equal(
      (await send(source.id, github(source.secret, { ref: 'a' }, { id }))).status,
      200,
      'no duplicate',
    );
    h.setNow(new Date(t0.getTime() + 80_000));
    const forged = github(source.secret, { ref: 'b' }, { signature: `sha256=${'0'.repeat(64)}` });
    assert.equal((await send(source.id, forged)).status, 401, 'a forged request verified');
    h.setNow(new Date(t0.getTime() + 120_000));
    const long = { ref: 'c', pad: 'é'.repeat(5_000) };
    assert.equal((await send(source.id, github(source.secret, long))).status, 202, 'a long body was refused');

    const all = await requestLog(session, source.id);
    assert.deepEqual(
      all.map((e) => e.outcome),
      ['accepted', 'invalid_signature', 'duplicate', 'accepted'],
      'the log is not newest first with each outcome',
    );
    const [longEntry, forgedEntry, duplicate, accepted] = all;
    assert.equal(accepted?.eventId, first.body.id, 'the accepted entry does not link its event');
    assert.equal(accepted?.eventType, 'github.push', 'the accepted entry has no event type');
    assert.equal(accepted?.providerDeliveryId, id, 'the accepted entry has no delivery ID');
    assert.equal(duplicate?.eventId, first.body.id, 'the duplicate does not link the first event');
    assert.equal(accepted?.body, JSON.stringify({ ref: 'a' }), 'the logged body is not the body');
    assert.equal(accepted?.bodyTruncated, false, 'a short body is said to be cut');
    for (const entry of all) {
      assert.equal(
        entry.headers['x-hub-signature-256'],
        '[redacted]',
        `a signature is logged (${entry.outcome})`,
      );
      assert.ok(Object.keys(entry.headers).length <= 20, 'more than 20 headers logged');
    }
    assert.equal(forgedEntry?.headers['x-github-event'], 'push', 'other headers are not logged');
    assert.equal(forgedEntry?.eventId, null, 'a forged request links an event');
    assert.equal(longEntry?.bodyTruncated, true, 'a long body is not said to be cut');
    assert.ok(Buffer.byteLength(longEntry?.body ?? '') <= 4096, 'more than 4 KiB of the body is logged');
    assert.ok((longEntry?.body.length ?? 0) > 1000, 'the start of a long body is not logged');

    const duplicates = await requestLog(session, source.id, '&outcome=duplicate');
    assert.deepEqual(
      duplicates.map((e) => e.id),
      [duplicate?.id],
      'the outcome filter does not hold',
    );
    const since = new Date(t0.getTime() + 30_000).toISOString();
    const until = new Date(t0.getTime() + 90_000).toISOString();
    const window = await requestLog(session, source.id, `&since=${since}&until=${until}`);
    assert.deepEqual(
      window.map((e) => e.outcome).sort(),
      ['duplicate', 'invalid_signature'],
      'since/until do not hold',
    );
    const bad = await h.request('GET', `${SOURCES}/${source.id}/requests?outcome=lost`, { session });
    assert.equal(bad.status, 400, 'an unknown outcome is accepted as a filter');

    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await h.request('GET', `${SOURCES}/${source.id}/requests${query}`, { session });
      assert.equal(page.status, 200, page.text);
      paged.push(...page.body.data.map((e: { id: string }) => e.id));
      cursor = page.body.nextCursor;
    } while (cursor && paged.length < 10);
    assert.deepEqual(
      paged,
      all.map((e) => e.id),
      'paging one at a time does not give the whole log once',
    );
    assertNoLeak(h, [source.secret]);
  });

  test('a flood of bad signatures: at most 60 logged a minute per source, every one counted in /metrics', async () => {
    const { session } = await makeSignedInTenant(h);
    const source = await githubSource(session, { maxPerSecond: 1000 });
    const before = await ingestCount('invalid_signature');
    const FLOOD = 130;
    const startMinute = Math.floor(Date.now() / 60_000);
    for (let i = 0; i < FLOOD; i++) {
      const r = await send(source.id, github('forged', { n: i }));
      assert.equal(r.status, 401, `forged request ${i} answered ${r.status}`);
    }
    const minutes = Math.floor(Date.now() / 60_000) - startMinute + 1;
    assert.equal((await ingestCount('invalid_signature')) - before, FLOOD, 'not every refusal is counted');
    const logged = (await requestLog(session, source.id, '&outcome=invalid_signature')).length;
    // 60 in one minute; a run across a minute's turn may log up to 60 in each (the page shows 100).
    if (minutes === 1) assert.equal(logged, 60, `${logged} of ${FLOOD} forged requests logged in one minute`);
    else assert.ok(logged >= 60 && logged <= 100, `${logged} of ${FLOOD} logged across ${minutes} minutes`);
    // A good request after the flood is still logged: the cap is on the noise, not on the source.
    assert.equal(
      (await send(source.id, github(source.secret, { ok: true }))).status,
      202,
      'the flood blocked a good request',
    );
    const accepted = await requestLog(session, source.id, '&outcome=accepted');
    assert.equal(accepted.length, 1, 'a good request after the flood is not logged');
    const other = await githubSource(session, { maxPerSecond: 1000 });
    assert.equal((await send(other.id, github('forged', {}))).status, 401, 'a forged request verified');
    assert.equal(
      (await requestLog(session, other.id)).length,
      1,
      'one source’s flood used another source’s allowance',
    );
  });
});
