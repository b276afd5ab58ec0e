import assert from 'node:assert/strict';
import { randomBase62 } from '../../src/crypto/base62.js';
import type { Harness, TestSession } from './harness.js';

/** A tenant of its own for one test, created through the platform API. */
export async function makeTenant(
  h: Harness,
  options: { name?: string; entitlements?: string[] } = {},
): Promise<{ id: string; name: string; entitlements: string[] }> {
  const response = await h.request<{ id: string; name: string; entitlements: string[] }>(
    'POST',
    '/api/v1/platform/tenants',
    {
      token: h.platformToken,
      body: { name: options.name ?? `Tenant ${randomBase62(6)}`, entitlements: options.entitlements ?? [] },
    },
  );
  assert.equal(response.status, 201, `creating a tenant answered ${response.status}: ${response.text}`);
  return response.body;
}

export const TEST_PASSWORD = 'correct horse battery staple';

export async function makeUser(
  h: Harness,
  tenantId: string,
  options: { role?: string; email?: string; password?: string } = {},
): Promise<{ id: string; email: string; role: string; tenantId: string; password: string }> {
  const password = options.password ?? TEST_PASSWORD;
  type User = { id: string; email: string; role: string; tenantId: string };
  const response = await h.request<User>('POST', `/api/v1/platform/tenants/${tenantId}/users`, {
    token: h.platformToken,
    body: {
      email: options.email ?? `user-${randomBase62(8).toLowerCase()}@example.com`,
      role: options.role ?? 'COMPANY_IT_ADMIN',
      password,
    },
  });
  assert.equal(response.status, 201, `creating a user answered ${response.status}: ${response.text}`);
  return { ...response.body, password };
}

/**
 * Asserts that no secret appears in any captured log line, and in no response at all (`never`,
 * e.g. passwords) or in exactly the one response that showed it once (`shownOnce`, e.g. a new key).
 */
export function assertNoLeak(h: Harness, never: string[], shownOnce: string[] = []): void {
  const logs = h.logs();
  const responses = h.responses();
  for (const secret of [...never, ...shownOnce])
    assert.ok(!logs.includes(secret), 'a secret appeared in the logs');
  for (const secret of never) {
    assert.ok(!responses.some((r) => r.includes(secret)), 'a secret appeared in a response');
  }
  for (const secret of shownOnce) {
    assert.equal(responses.filter((r) => r.includes(secret)).length, 1, 'a secret was shown more than once');
  }
}

/** Signs a user in with their password and keeps the cookies as a browser would. */
export async function signIn(h: Harness, user: { email: string; password: string }): Promise<TestSession> {
  const response = await h.request<{ csrfToken: string }>('POST', '/api/v1/auth/login', {
    body: { email: user.email, password: user.password },
  });
  assert.equal(response.status, 200, `signing in answered ${response.status}: ${response.text}`);
  const cookie = response.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  return { cookie, csrfToken: response.body.csrfToken };
}

/** A tenant with an admin who is signed in: the usual starting point of a tenant-side test. */
export async function makeSignedInTenant(
  h: Harness,
  options: { entitlements?: string[]; role?: string } = {},
): Promise<{
  tenant: { id: string };
  user: { id: string; email: string; password: string };
  session: TestSession;
}> {
  const tenant = await makeTenant(h, {
    entitlements: options.entitlements ?? ['integrations', 'integration_hub'],
  });
  const user = await makeUser(h, tenant.id, { role: options.role ?? 'COMPANY_IT_ADMIN' });
  return { tenant, user, session: await signIn(h, user) };
}

export const inDays = (days: number, from = new Date()): string =>
  new Date(from.getTime() + days * 24 * 60 * 60 * 1000).toISOString();

/** A tenant automation key created through the API; returns the record with its one-time secret. */
export async function makeKey(
  h: Harness,
  session: TestSession,
  options: { scopes?: string[]; expiresAt?: string; name?: string; rateLimitPerMinute?: number | null } = {},
) {
  type NewKey = {
    id: string;
    secret: string;
    prefix: string;
    scopes: string[];
    expiresAt: string;
    rateLimitPerMinute: number | null;
  };
  const response = await h.request<NewKey>('POST', '/api/v1/company/api-keys', {
    session,
    body: {
      name: options.name ?? `key ${randomBase62(4)}`,
      scopes: options.scopes ?? ['integrations:READER'],
      expiresAt: options.expiresAt ?? inDays(30),
      ...(options.rateLimitPerMinute === undefined ? {} : { rateLimitPerMinute: options.rateLimitPerMinute }),
    },
  });
  assert.equal(response.status, 201, `creating an API key answered ${response.status}: ${response.text}`);
  return response.body;
}

/**
 * A webhook connection to `url` with its credentials bound (a signing secret generated), so events
 * published by the tenant are delivered to it. `displayName` and other create fields via `extra`.
 */
export async function makeWebhookConnection(
  h: Harness,
  session: TestSession,
  url: string,
  extra: Record<string, unknown> = {},
): Promise<{ id: string; secret: string }> {
  const connections = '/api/v1/integrations/connections';
  const created = await h.request<{ id: string }>('POST', connections, {
    session,
    body: { connectorKey: 'webhook', displayName: 'hook', url, ...extra },
  });
  assert.equal(
    created.status,
    201,
    `creating a webhook connection answered ${created.status}: ${created.text}`,
  );
  type Bound = { credentials: { signingSecret: string } };
  const bound = await h.request<Bound>('PUT', `${connections}/${created.body.id}/credentials`, {
    session,
    body: {},
  });
  assert.equal(
    bound.status,
    200,
    `binding the connection's credentials answered ${bound.status}: ${bound.text}`,
  );
  return { id: created.body.id, secret: bound.body.credentials.signingSecret };
}
