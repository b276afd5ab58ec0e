import type { Kysely } from 'kysely';
import { recordAudit, type AuditOrigin } from '../access/audit.js';
import type { PortalAccess } from '../access/rules.js';
import type { TenantScope } from '../access/scope.js';
import { releaseReservation } from '../access/sessions.js';
import { visibleConnectionIds } from '../connections/connections.js';
import type { AppContext } from '../context.js';
import { generateToken } from '../crypto/api-tokens.js';
import { randomBase62 } from '../crypto/base62.js';
import { isIdOf, newId } from '../crypto/ids.js';
import type { Keyring } from '../crypto/keyring.js';
import type { DB } from '../db/schema.js';
import { listPage, type Page, type PageQuery } from '../http/pagination.js';
import { fieldProblem, HttpProblem, notFound } from '../http/problem.js';
import { reserveAttempt } from '../sign-in/sign-in.js';
import { getTenant } from '../tenants/tenants.js';
import { checkRoomForPortalSession } from './caps.js';
import type { Branding } from './settings-schemas.js';
import { brandingOf } from './settings.js';
import {
  addPortalSessionConnection,
  exchangeCodeRow,
  insertPortalSession,
  listPortalSessionRows,
  revokePortalSessionRow,
  setPortalSessionCode,
  type PortalSessionRow,
} from './store.js';

/** How long a session's link works, at most (never past the session's own end): docs/api/portal.md. */
export const CODE_LIFETIME_MS = 10 * 60 * 1000;
const CODE_LENGTH = 32;
const CODE_SHAPE = new RegExp(`^[0-9A-Za-z]{${CODE_LENGTH}}$`);

/**
 * Only keyed hashes are stored. The code is a one-time link, hashed as invitation links are (the
 * input marked as a portal code's, so it can never match another link's hash); the token is a
 * bearer secret of the tnt_ format, hashed as tenant keys are.
 */
const codeHashOf = (keyring: Keyring, code: string): string =>
  keyring.hashToken('setup-token-hash', `portal:${code}`);
export const portalTokenHashOf = (keyring: Keyring, token: string): string =>
  keyring.hashToken('token-hash', token);

/** The link: the code travels in the fragment, which browsers never send to a server. */
const portalUrl = (publicOrigin: string, tenantId: string, code: string): string =>
  `${publicOrigin}/portal/${tenantId}#code=${code}`;

/** A session as lists show it: never its code or token. */
export interface PortalSessionRecord {
  id: string;
  subject: string;
  access: PortalAccess;
  /** Null: every connection of the tenant, now and later. */
  connectionIds: string[] | null;
  status: 'pending' | 'active' | 'expired';
  expiresAt: string;
  createdAt: string;
}

/** The answer of a create: the record's facts and the link, shown once. */
export interface NewPortalSession {
  id: string;
  url: string;
  subject: string;
  access: PortalAccess;
  connectionIds: string[] | null;
  expiresAt: string;
  createdAt: string;
}

export interface PortalSessionInput {
  subject: string;
  access?: PortalAccess;
  connectionIds?: string[];
  expiresInSeconds?: number;
}

const DEFAULT_ACCESS: PortalAccess = 'operate';
const DEFAULT_LIFETIME_SECONDS = 3600;

function toRecord(row: PortalSessionRow, now: Date): PortalSessionRecord {
  const expiresAt = new Date(row.expires_at);
  return {
    id: row.id,
    subject: row.subject,
    access: row.access,
    connectionIds: row.connection_ids,
    // Pending: the link was not used yet; active: its token works until expiresAt.
    status: expiresAt <= now ? 'expired' : row.exchanged_at ? 'active' : 'pending',
    expiresAt: expiresAt.toISOString(),
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/** Every ID given must be one of the tenant's connections; the first that is not is named. */
async function checkConnectionIds(db: Kysely<DB>, scope: TenantScope, ids: readonly string[]): Promise<void> {
  const unknown = (index: number, id: string) =>
    fieldProblem(`connectionIds/${index}`, `${id} is not a connection of this tenant`);
  const shaped = ids.findIndex((id) => !isIdOf('con', id));
  if (shaped >= 0) throw unknown(shaped, ids[shaped] ?? '');
  const found = await visibleConnectionIds(db, scope, ids);
  const missing = ids.findIndex((id) => !found.has(id));
  if (missing >= 0) throw unknown(missing, ids[missing] ?? '');
}

/**
 * A new portal session for the scope's tenant (docs/api/portal.md), audited: its link carries a code
 * that works once, for 10 minutes at most, and is stored only as a hash.
 */
export async function createPortalSession(
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  input: PortalSessionInput,
): Promise<NewPortalSession> {
  const connectionIds = input.connectionIds ? [...new Set(input.connectionIds)] : null;
  if (connectionIds) await checkConnectionIds(ctx.db, scope, connectionIds);
  const at = origin.at;
  const expiresAt = new Date(at.getTime() + (input.expiresInSeconds ?? DEFAULT_LIFETIME_SECONDS) * 1000);
  const codeExpiresAt = new Date(Math.min(at.getTime() + CODE_LIFETIME_MS, expiresAt.getTime()));
  const code = randomBase62(CODE_LENGTH);
  const row: Omit<PortalSessionRow, 'tenant_id'> = {
    id: newId('pts'),
    subject: input.subject,
    access: input.access ?? DEFAULT_ACCESS,
    connection_ids: connectionIds,
    code_hash: codeHashOf(ctx.keyring, code),
    code_expires_at: codeExpiresAt,
    expires_at: expiresAt,
    created_at: at,
    created_by_type: origin.actorType,
    created_by: origin.actorId,
    exchanged_at: null,
    revoked_at: null,
  };
  await ctx.db.transaction().execute(async (trx) => {
    await checkRoomForPortalSession(trx, scope, at);
    await insertPortalSession(trx, scope, row);
    await recordAudit(trx, origin, {
      action: 'portal_session.create',
      tenantId: scope.tenantId,
      targetType: 'portal_session',
      targetId: row.id,
      metadata: {
        subject: row.subject,
        access: row.access,
        connectionIds,
        expiresAt: expiresAt.toISOString(),
      },
    });
  });
  return {
    id: row.id,
    url: portalUrl(ctx.config.publicUrl.origin, scope.tenantId, code),
    subject: row.subject,
    access: row.access,
    connectionIds,
    expiresAt: expiresAt.toISOString(),
    createdAt: at.toISOString(),
  };
}

export function listPortalSessions(
  ctx: AppContext,
  scope: TenantScope,
  query: PageQuery,
): Promise<Page<PortalSessionRecord>> {
  const now = ctx.now();
  return listPage(
    query,
    'pts',
    (limit, after) => listPortalSessionRows(ctx.db, scope, limit, after),
    (rows) => rows.map((row) => toRecord(row, now)),
    { keyring: ctx.keyring, list: ['portal-sessions', scope.tenantId] },
  );
}

/** Ends a session at once: its link and its token stop working (audited). Unknown or ended: 404. */
export async function revokePortalSession(
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  id: string,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const revoked = isIdOf('pts', id) ? await revokePortalSessionRow(trx, scope, id, origin.at) : undefined;
    if (!revoked) throw notFound('portal session');
    await recordAudit(trx, origin, {
      action: 'portal_session.revoke',
      tenantId: scope.tenantId,
      targetType: 'portal_session',
      targetId: id,
      metadata: { subject: revoked.subject },
    });
  });
}

/** What the portal page shows of its session (`GET /api/v1/portal/session`, and the exchange's answer). */
export interface PortalSessionView {
  expiresAt: string;
  session: { id: string; subject: string; access: PortalAccess; connectionIds: string[] | null };
  tenant: { id: string; name: string };
  branding: Branding;
}

/**
 * The view of a session. Its tenant is the one its own token or its code names: the secret
 * identifies the tenant, as a tenant key's does, so no scope is needed to read the tenant's name.
 */
export async function portalSessionView(
  ctx: AppContext,
  tenantId: string,
  session: {
    id: string;
    subject: string;
    access: PortalAccess;
    connectionIds: readonly string[] | null;
    expiresAt: Date;
  },
): Promise<PortalSessionView> {
  const [tenant, branding] = await Promise.all([getTenant(ctx, tenantId), brandingOf(ctx.db, tenantId)]);
  return {
    expiresAt: session.expiresAt.toISOString(),
    session: {
      id: session.id,
      subject: session.subject,
      access: session.access,
      connectionIds: session.connectionIds && [...session.connectionIds],
    },
    tenant: { id: tenant.id, name: tenant.name },
    branding,
  };
}

const invalidCode = (): HttpProblem =>
  new HttpProblem('invalid_credentials', 'This portal link is wrong, used, expired or ended.');
const TOO_MANY_CODES = 'Too many wrong portal links from this address; try again later.';

/**
 * Exchanges a portal link's code for the session's `ptl_` token (docs/api/portal.md), once. A
 * wrong, used, expired or ended code is `401 invalid_credentials`; `throttleKey` names the client
 * (its address bucket), whose wrong codes count as sign-in failures do: ten within 15 minutes and
 * it gets 429. A code that works is not counted.
 */
export async function exchangePortalCode(
  ctx: AppContext,
  throttleKey: string,
  code: string,
): Promise<PortalSessionView & { token: string }> {
  const now = ctx.now();
  await reserveAttempt(ctx.db, throttleKey, now, TOO_MANY_CODES);
  const token = generateToken('ptl_');
  const row = CODE_SHAPE.test(code)
    ? await exchangeCodeRow(ctx.db, codeHashOf(ctx.keyring, code), portalTokenHashOf(ctx.keyring, token), now)
    : undefined;
  if (!row) throw invalidCode();
  await releaseReservation(ctx.db, throttleKey, now);
  const view = await portalSessionView(ctx, row.tenant_id, {
    id: row.id,
    subject: row.subject,
    access: row.access,
    connectionIds: row.connection_ids,
    expiresAt: new Date(row.expires_at),
  });
  return { token, ...view };
}

/**
 * A new single-use code for a live session, by the same rules as its link's (CODE_LIFETIME_MS, never
 * past the session's end), for a page that must reopen the portal without the token it has (an
 * OAuth2 authorization's callback, in a tab of its own). Answers the code, or null when the session
 * is revoked or over. Exchanging it adds a token to the session; the tokens it has keep working.
 */
export async function mintPortalCode(
  db: Kysely<DB>,
  keyring: Keyring,
  scope: TenantScope,
  sessionId: string,
  at: Date,
): Promise<string | null> {
  const code = randomBase62(CODE_LENGTH);
  const until = new Date(at.getTime() + CODE_LIFETIME_MS);
  const row = await setPortalSessionCode(db, scope, sessionId, codeHashOf(keyring, code), until, at);
  return row ? code : null;
}

/** Makes a connection just created through a narrowed scope one of its session's (connections/). */
export async function joinPortalSession(
  trx: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
): Promise<void> {
  if (!scope.connections) return;
  await addPortalSessionConnection(trx, scope, scope.connections.portalSessionId, connectionId);
}
