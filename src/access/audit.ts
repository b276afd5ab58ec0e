import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { newId } from '../crypto/ids.js';
import type { DB } from '../db/schema.js';
import { clientAddress } from './client-address.js';
import { actorOf } from './principal.js';
import { viaOf } from './via.js';

/**
 * Every action an audit row can record: the writer below takes no other, so a new action is added
 * here first, and the web UI's words for it (ui/audit/words.ts, checked by test/access/audit-words.test.ts)
 * follow.
 */
export const AUDIT_ACTIONS = [
  'sign_in.success',
  'sign_in.failure',
  'setup.complete',
  'setup.failure',
  'api_key.create',
  'api_key.rotate',
  'api_key.revoke',
  'platform_key.create',
  'platform_key.revoke',
  'passkey.create',
  'passkey.delete',
  'user.password_sign_in.update',
  'user.create',
  'user.invite',
  'user.activate',
  'user.role.update',
  'user.delete',
  'tenant.create',
  'tenant.entitlements.update',
  'tenant.quotas.update',
  'connection.create',
  'connection.update',
  'connection.credentials.bind',
  'connection.authorize',
  'connection.authorization.expire',
  'connection.pause',
  'connection.resume',
  'connection.recover',
  'connection.test',
  'connection.revoke',
  'connect_session.create',
  'connect_session.revoke',
  'event_type.create',
  'event_type.update',
  'event_type.delete',
  'oauth_provider.create',
  'oauth_provider.update',
  'oauth_provider.delete',
  'alerting.channel.create',
  'alerting.channel.update',
  'alerting.channel.delete',
  'alerting.rules.replace',
  'portal_settings.update',
  'portal_session.create',
  'portal_session.revoke',
  'mcp_grant.create',
  'mcp_grant.revoke',
  'source.create',
  'source.update',
  'source.delete',
  'source.rotate_secret',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditEntry {
  action: AuditAction;
  /**
   * Whose log the row goes to: the scope's tenant (`scope.tenantId`), or null for a platform action
   * on no tenant. A plain ID, not a scope, because a row is only written here: a failed sign-in is
   * logged for the tenant of the account it tried, which the caller must not get a scope for.
   */
  tenantId: string | null;
  targetType?: string;
  targetId?: string;
  /** Non-secret facts about the change (names, scopes, roles). Never a secret or a body. */
  metadata?: Record<string, unknown>;
}

export interface AuditOrigin {
  actorType: string;
  actorId: string | null;
  /** A portal session's subject (actorType `portal`): every row it writes names the person. */
  actorSubject?: string;
  ip: string | null;
  requestId: string | null;
  at: Date;
  /** `mcp` when an MCP tool call made the request (docs/api/mcp.md): the row's metadata says so. */
  via?: 'mcp';
}

export function auditOrigin(request: FastifyRequest, at: Date): AuditOrigin {
  const via = viaOf(request);
  const origin = { ...actorOf(request.principal), ip: clientAddress(request), requestId: request.id, at };
  return via ? { ...origin, via } : origin;
}

/** Writes one audit row; call it with the transaction that makes the change it records. */
export async function recordAudit(db: Kysely<DB>, origin: AuditOrigin, entry: AuditEntry): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      id: newId('aud'),
      tenant_id: entry.tenantId,
      actor_type: origin.actorType,
      actor_id: origin.actorId,
      action: entry.action,
      target_type: entry.targetType ?? null,
      target_id: entry.targetId ?? null,
      ip: origin.ip,
      request_id: origin.requestId,
      metadata: JSON.stringify({
        ...entry.metadata,
        ...(origin.actorSubject === undefined ? {} : { subject: origin.actorSubject }),
        ...(origin.via === undefined ? {} : { via: origin.via }),
      }),
      created_at: origin.at,
    })
    .execute();
}
