import { sql, type Kysely } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import type { DB } from '../db/schema.js';
import { HttpProblem } from '../http/problem.js';

/**
 * What one tenant may hold at once (docs/decisions/0077-portal-and-connect-link-caps.md): each live
 * session or pending link is a row and a secret that works, and a tenant key that loops on a create
 * would otherwise fill the tables every tenant shares. Generous on purpose: a platform mints a
 * session per page view of its customer, and a link per customer it onboards.
 */
export const MAX_LIVE_PORTAL_SESSIONS = 1_000;
export const MAX_PENDING_CONNECT_LINKS = 1_000;

/**
 * Holds the tenant's creates of one kind until the end of the transaction, in every process: a
 * create counts and then inserts under it, so two creates at the last place wait for each other
 * and the second counts the first's row.
 */
async function lockCreatesOf(trx: Kysely<DB>, scope: TenantScope, kind: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`hubgate:${kind}:${scope.tenantId}`}, 0))`.execute(
    trx,
  );
}

/**
 * The tenant's portal sessions that still work: not revoked, not expired, and either exchanged or
 * holding a code that can still be (a session whose link lapsed unused can never be used).
 */
async function countLivePortalSessions(trx: Kysely<DB>, scope: TenantScope, at: Date): Promise<number> {
  const row = await trx
    .selectFrom('portal_sessions')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('tenant_id', '=', scope.tenantId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', at)
    .where((eb) => eb.or([eb('exchanged_at', 'is not', null), eb('code_expires_at', '>', at)]))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The tenant's links that still work: not completed, deleted or expired. */
async function countPendingConnectLinks(trx: Kysely<DB>, scope: TenantScope, at: Date): Promise<number> {
  const row = await trx
    .selectFrom('connect_sessions')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('tenant_id', '=', scope.tenantId)
    .where('completed_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', at)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Refuses a new portal session with `409 conflict` when the tenant holds its most live ones. Run
 * in the transaction that inserts the session, before the insert.
 */
export async function checkRoomForPortalSession(
  trx: Kysely<DB>,
  scope: TenantScope,
  at: Date,
): Promise<void> {
  await lockCreatesOf(trx, scope, 'portal-sessions');
  if ((await countLivePortalSessions(trx, scope, at)) >= MAX_LIVE_PORTAL_SESSIONS)
    throw new HttpProblem(
      'conflict',
      `The tenant has ${MAX_LIVE_PORTAL_SESSIONS} live portal sessions, the most it may have. ` +
        'End sessions no longer needed (DELETE …/portal-sessions/:id), or wait until they expire.',
    );
}

/**
 * Refuses a new connect link with `409 conflict` when the tenant holds its most pending ones. Run
 * in the transaction that inserts the link, before the insert.
 */
export async function checkRoomForConnectLink(trx: Kysely<DB>, scope: TenantScope, at: Date): Promise<void> {
  await lockCreatesOf(trx, scope, 'connect-sessions');
  if ((await countPendingConnectLinks(trx, scope, at)) >= MAX_PENDING_CONNECT_LINKS)
    throw new HttpProblem(
      'conflict',
      `The tenant has ${MAX_PENDING_CONNECT_LINKS} pending connect links, the most it may have. ` +
        'Delete links no longer needed (DELETE …/connect-sessions/:id), or wait until they are used or expire.',
    );
}
