import assert from 'node:assert/strict';
import { randomBase62 } from '../../src/crypto/base62.js';
import type { Harness, TestResponse, TestSession } from '../helpers/harness.js';

export const USERS = '/api/v1/company/users';
export const LOOKUP = '/api/v1/invitations/lookup';
export const ACCEPT = '/api/v1/invitations/accept';

export const newEmail = (what = 'person'): string => `${what}-${randomBase62(10).toLowerCase()}@example.com`;

export function assertProblem(response: TestResponse, status: number, code: string, what: string): void {
  assert.equal(
    response.status,
    status,
    `${what}: expected ${status} ${code}, got ${response.status}: ${response.text}`,
  );
  assert.equal(response.body?.code, code, `${what}: expected the code ${code}: ${response.text}`);
}

export interface Invited {
  id: string;
  email: string;
  role: string;
  status: string;
  url: string;
  token: string;
  expiresAt: string;
}

/** The token of an invitation link, after `#token=`. */
export function tokenOf(url: string): string {
  const token = /#token=([0-9A-Za-z]+)$/.exec(url)?.[1];
  assert.ok(token, `the invitation link carries no token in its fragment: ${url}`);
  return token;
}

/** Invites a person through the API; asserts 201 and returns them with their link and its token. */
export async function invite(
  h: Harness,
  session: TestSession,
  body: { email?: string; role?: string } = {},
): Promise<Invited> {
  const email = body.email ?? newEmail('invited');
  const r = await h.request('POST', USERS, { session, body: { email, role: body.role ?? 'MEMBER' } });
  assert.equal(r.status, 201, `inviting ${email} answered ${r.status}: ${r.text}`);
  const { invitation, ...user } = r.body;
  return { ...user, url: invitation.url, token: tokenOf(invitation.url), expiresAt: invitation.expiresAt };
}

/** Accepts an invitation from `address` (the harness trusting one proxy); the caller checks the answer. */
export const accept = (h: Harness, token: string, password: string, address = '198.51.100.1') =>
  h.request('POST', ACCEPT, { headers: { 'x-forwarded-for': address }, body: { token, password } });

export const lookup = (h: Harness, token: string, address = '198.51.100.1') =>
  h.request('POST', LOOKUP, { headers: { 'x-forwarded-for': address }, body: { token } });

/** The session an answer's cookies started, as a browser keeps it. */
export function sessionOf(response: TestResponse): TestSession {
  return {
    cookie: response.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; '),
    csrfToken: response.body.csrfToken,
  };
}

/** The tenant's audit actions, oldest first. */
export async function auditActions(h: Harness, tenantId: string): Promise<string[]> {
  const rows = await h.database.kysely
    .selectFrom('audit_log')
    .select('action')
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at')
    .execute();
  return rows.map((r) => r.action);
}

/** The person as the tenant's list shows them (first page of 100). */
export async function listed(h: Harness, session: TestSession, userId: string) {
  const r = await h.request('GET', `${USERS}?limit=100`, { session });
  assert.equal(r.status, 200, `listing people answered ${r.status}: ${r.text}`);
  return (r.body.data as Array<{ id: string }>).find((u) => u.id === userId) as
    Record<string, unknown> | undefined;
}
