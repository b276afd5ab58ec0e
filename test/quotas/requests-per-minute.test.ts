import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeKey, makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness, type TestResponse } from '../helpers/harness.js';

// The platform's `requestsPerMinute` quota as the gate applies it, set through the quotas route (no
// test hook): every credential of the tenant counts on one bucket; its neighbours count nothing there
// (docs/api/quotas.md, docs/api/rate-limits.md).

const HEALTH = '/api/v1/automation/health';
/** A window of its own, mid-minute, so the test stays inside one fixed window. */
const freshWindow = () => new Date((Math.floor(Date.now() / 60_000) + 30) * 60_000 + 20_000);

describe('requestsPerMinute, set by the platform', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  const setQuotas = (tenantId: string, requestsPerMinute: number | null) =>
    h.request('PUT', `/api/v1/platform/tenants/${tenantId}/quotas`, {
      token: h.platformToken,
      body: { eventsPerDay: null, connections: null, requestsPerMinute, retentionDays: null },
    });

  function assertTenantRefusal(r: TestResponse, what: string): void {
    assert.equal(r.status, 429, `${what}: answered ${r.status}, not 429: ${r.text}`);
    assert.equal(r.body.code, 'rate_limited', `${what}: refused with ${r.body.code}`);
    assert.match(r.headers.get('retry-after') ?? '', /^[1-9]\d*$/, `${what}: no Retry-After`);
    assert.match(r.headers.get('ratelimit-policy') ?? '', /"tenant";q=4;w=60/, `${what}: no tenant policy`);
    assert.match(r.headers.get('ratelimit') ?? '', /"tenant";r=0;t=\d+/, `${what}: RateLimit not spent`);
  }

  test('a tenant at its requests per minute gets 429 on every credential; another tenant notices nothing; lifting it applies at once', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const first = await makeKey(h, session);
    const second = await makeKey(h, session);
    const { session: neighbourSession } = await makeSignedInTenant(h);
    const neighbour = await makeKey(h, neighbourSession);
    const set = await setQuotas(tenant.id, 4);
    assert.equal(set.status, 200, `setting the quota answered ${set.status}: ${set.text}`);
    assert.equal(set.body.requestsPerMinute, 4, 'the answer does not show the quota');
    h.setNow(freshWindow());
    try {
      for (let i = 1; i <= 4; i++) {
        const r = await h.request('GET', HEALTH, { token: (i % 2 ? first : second).secret });
        assert.equal(r.status, 200, `the tenant's request ${i} of 4 is refused: ${r.text}`);
        assert.match(
          r.headers.get('ratelimit') ?? '',
          new RegExp(`"tenant";r=${4 - i};`),
          `request ${i}: count`,
        );
      }
      assertTenantRefusal(
        await h.request('GET', HEALTH, { token: first.secret }),
        'the first key, 5th request',
      );
      assertTenantRefusal(await h.request('GET', HEALTH, { token: second.secret }), 'the second key');
      assertTenantRefusal(await h.request('GET', '/api/v1/company/api-keys', { session }), 'the session');
      for (let i = 0; i < 8; i++) {
        const r = await h.request('GET', HEALTH, { token: neighbour.secret });
        assert.equal(r.status, 200, `the neighbour's request ${i + 1} is refused: ${r.text}`);
        assert.doesNotMatch(
          r.headers.get('ratelimit-policy') ?? '',
          /"tenant"/,
          'the neighbour has a tenant bucket',
        );
      }
      // Lifted by the platform: this process forgets the tenant's quotas at once.
      assert.equal((await setQuotas(tenant.id, null)).status, 200, 'lifting the quota failed');
      const lifted = await h.request('GET', HEALTH, { token: first.secret });
      assert.equal(lifted.status, 200, `after lifting, the tenant is still refused: ${lifted.text}`);
    } finally {
      h.setNow(null);
    }
  });

  test('a publish over eventsPerDay: 429 quota_exceeded whose RateLimit-Policy names the day', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
    const set = await h.request('PUT', `/api/v1/platform/tenants/${tenant.id}/quotas`, {
      token: h.platformToken,
      body: { eventsPerDay: 1, connections: null, requestsPerMinute: null, retentionDays: null },
    });
    assert.equal(set.status, 200, `setting the quota: ${set.text}`);
    const publish = () =>
      h.request('POST', '/api/v1/integrations/events', {
        token: key.secret,
        body: { type: 'order.created', data: { n: 1 } },
      });
    assert.equal((await publish()).status, 202, 'the day’s one event is refused');
    const over = await publish();
    assert.equal(over.status, 429, `the second publish answered ${over.status}: ${over.text}`);
    assert.equal(over.body.code, 'quota_exceeded', 'the refusal is not quota_exceeded');
    const retryAfter = over.headers.get('retry-after') ?? '';
    assert.match(retryAfter, /^[1-9]\d*$/, 'no Retry-After');
    assert.equal(over.headers.get('ratelimit-policy'), '"events-per-day";q=1;w=86400', 'RateLimit-Policy');
    assert.equal(over.headers.get('ratelimit'), `"events-per-day";r=0;t=${retryAfter}`, 'RateLimit');
  });

  test('a test event counts on eventsPerDay: over the quota it is refused with the same 429, and no event is written', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const connection = await makeWebhookConnection(h, session, 'https://hooks.example.com/quota');
    const set = await h.request('PUT', `/api/v1/platform/tenants/${tenant.id}/quotas`, {
      token: h.platformToken,
      body: { eventsPerDay: 1, connections: null, requestsPerMinute: null, retentionDays: null },
    });
    assert.equal(set.status, 200, `setting the quota: ${set.text}`);
    const test = () =>
      h.request('POST', `/api/v1/integrations/connections/${connection.id}/test`, { session, body: {} });
    const first = await test();
    assert.equal(first.status, 202, `the day's one event (a test event) is refused: ${first.text}`);
    const over = await test();
    assert.equal(over.status, 429, `a test event over the quota answered ${over.status}: ${over.text}`);
    assert.equal(over.body.code, 'quota_exceeded', 'the refusal is not quota_exceeded');
    const quotas = await h.request('GET', `/api/v1/platform/tenants/${tenant.id}/quotas`, {
      token: h.platformToken,
    });
    assert.equal(quotas.body.usage.eventsToday, 1, 'a refused test event was written');
  });
});
