import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Problem } from '../helpers/events.js';
import { inDays, makeKey, makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness, type TestResponse, type TestSession } from '../helpers/harness.js';
import { CONNECTIONS, operate } from '../helpers/operate.js';

// docs/api/conventions.md: every RFC 3339 time a client sends is read by one parser, which refuses
// what it cannot represent with a 400 naming the field, on the body and the query alike. Found by
// fuzzing: a leap second in recover's `since` reached the query and answered 500.
const ENV = { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' };

let h: Harness;
let session: TestSession;
let connectionId: string;
before(async () => {
  h = await startHarness({ env: ENV });
  ({ session } = await makeSignedInTenant(h));
  // Nothing is delivered in this file: the receiver's address is never called.
  connectionId = (await makeWebhookConnection(h, session, 'http://127.0.0.1:9/hook')).id;
});
after(() => h.close());

const HOUR_MS = 3_600_000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

/**
 * Times that name no instant this service can represent, each written otherwise valid (a recent
 * date, so a refusal is the parser's, not recover's 14-day window). `at` is an ISO date-time in the
 * last day, `day` its date part.
 */
function refused(): Array<[string, string]> {
  const at = ago(HOUR_MS);
  const day = at.slice(0, 10);
  return [
    ['a leap second', `${day}T23:59:60Z`],
    ['a leap second with an offset', `${day}T10:59:60+01:00`],
    ['a space for the T', `${day} 10:00:00Z`],
    ['a day its month lacks', '2024-02-30T10:00:00Z'],
    ['hour 24', `${day}T24:00:00Z`],
    ['no offset', `${day}T10:00:00`],
    ['an offset of 24 hours', `${day}T10:00:00+24:00`],
    ['minute 60', `${day}T10:60:00Z`],
    ['a date alone', day],
    ['a five-digit year', `+0${at}`],
  ];
}

function assertRefused(r: TestResponse<Problem>, field: string, what: string): void {
  assert.equal(r.status, 400, `${what}: expected 400, got ${r.status}: ${r.text}`);
  assert.equal(r.body.code, 'validation_failed', `${what}: expected validation_failed: ${r.text}`);
  assert.ok(
    r.body.errors?.some((e) => e.path === field),
    `${what}: the error does not name ${field}: ${JSON.stringify(r.body.errors)}`,
  );
}

test('recover refuses a leap second, a space and every other time it cannot represent, in since and until', async () => {
  for (const [what, time] of refused()) {
    assertRefused(
      await operate(h, session, connectionId, 'recover', { since: time }),
      'since',
      `recover with since ${what} (${time})`,
    );
    assertRefused(
      await operate(h, session, connectionId, 'recover', { since: ago(2 * HOUR_MS), until: time }),
      'until',
      `recover with until ${what} (${time})`,
    );
  }
  // The same instants written well still recover (nothing failed: none queued).
  for (const [since, until] of [
    [ago(2 * HOUR_MS), undefined],
    [ago(2 * HOUR_MS).replace('Z', '+00:00'), ago(HOUR_MS).toLowerCase()],
    [ago(2 * HOUR_MS).replace(/\.\d+Z$/, '.123456789Z'), '9999-12-31T23:59:59.999-23:59'],
  ]) {
    const r = await operate(h, session, connectionId, 'recover', { since, until });
    assert.equal(r.status, 202, `recover from ${since} to ${until} answered ${r.status}: ${r.text}`);
    assert.deepEqual(r.body, { queued: 0 }, 'recover queued deliveries of a connection that never failed');
  }
});

test('the event log refuses the same times in its since and until filters', async () => {
  const events = `${CONNECTIONS}/${connectionId}/events`;
  for (const [what, time] of refused()) {
    for (const name of ['since', 'until']) {
      const r = await h.request<Problem>('GET', `${events}?${name}=${encodeURIComponent(time)}`, { session });
      assertRefused(r, `querystring.${name}`, `the log with ${name} ${what} (${time})`);
    }
  }
  const r = await h.request('GET', `${events}?since=${encodeURIComponent(ago(HOUR_MS))}`, { session });
  assert.equal(r.status, 200, `the log with a good since answered ${r.status}: ${r.text}`);
});

test('creating and rotating a key refuse the same times in expiresAt', async () => {
  const keys = '/api/v1/company/api-keys';
  // Times a day ahead, so that what refuses them is the parser, not the one-minute minimum.
  const ahead = inDays(1);
  const day = ahead.slice(0, 10);
  const cases: Array<[string, string]> = [
    ['a leap second', `${day}T23:59:60Z`],
    ['a space for the T', `${day} 10:00:00Z`],
    ['hour 24', `${day}T24:00:00Z`],
    ['no offset', `${day}T10:00:00`],
    ['a day its month lacks', `${day.slice(0, 8)}32T10:00:00Z`],
  ];
  const key = await makeKey(h, session);
  for (const [what, time] of cases) {
    const created = await h.request<Problem>('POST', keys, {
      session,
      body: { name: 'k', scopes: ['integrations:READER'], expiresAt: time },
    });
    assertRefused(created, 'expiresAt', `creating a key expiring at ${what} (${time})`);
    const rotated = await h.request<Problem>('POST', `${keys}/${key.id}/rotate`, {
      session,
      body: { expiresAt: time },
    });
    assertRefused(rotated, 'expiresAt', `rotating a key to expire at ${what} (${time})`);
  }
  const made = await makeKey(h, session, { expiresAt: ahead.replace('Z', '+00:00') });
  assert.equal(made.expiresAt, ahead, 'a key made with an offset of +00:00 expires at another instant');
});
