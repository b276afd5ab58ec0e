import { recordAudit, type AuditOrigin } from '../access/audit.js';
import { LEVELS, MODULE_KEYS } from '../access/catalog.js';
import type { SessionPrincipal } from '../access/principal.js';
import type { TenantScope } from '../access/scope.js';
import type { AppContext } from '../context.js';
import { displayPrefix, generateToken } from '../crypto/api-tokens.js';
import { isIdOf, newId } from '../crypto/ids.js';
import { listPage, type Page, type PageQuery } from '../http/pagination.js';
import { fieldProblem, HttpProblem, notFound } from '../http/problem.js';
import { isoOrNull } from '../http/schemas.js';
import { timeField } from '../http/time.js';
import {
  findApiKeyRow,
  insertApiKey,
  listApiKeyRows,
  updateApiKeyRow,
  type ApiKeyRow,
} from './tenant-store.js';

export interface ApiKeyRecord {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  status: 'active' | 'expired' | 'revoked';
  createdAt: string;
  createdBy: string | null;
  expiresAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  rotatedAt: string | null;
  /** Null: the global `RATE_LIMIT_PER_MINUTE`. */
  rateLimitPerMinute: number | null;
}

export function keyStatus(
  row: Pick<ApiKeyRow, 'revoked_at' | 'expires_at'>,
  now: Date,
): ApiKeyRecord['status'] {
  if (row.revoked_at) return 'revoked';
  return new Date(row.expires_at) <= now ? 'expired' : 'active';
}

export function toKeyRecord(row: ApiKeyRow, now: Date): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    status: keyStatus(row, now),
    createdAt: new Date(row.created_at).toISOString(),
    createdBy: row.created_by,
    expiresAt: new Date(row.expires_at).toISOString(),
    lastUsedAt: isoOrNull(row.last_used_at),
    revokedAt: isoOrNull(row.revoked_at),
    rotatedAt: isoOrNull(row.rotated_at),
    rateLimitPerMinute: row.rate_limit_per_minute,
  };
}

const MIN_LIFETIME_MS = 60 * 1000;
const MAX_LIFETIME_MS = 366 * 24 * 60 * 60 * 1000;

function checkExpiry(value: string, now: Date): Date {
  const at = timeField(value, 'expiresAt');
  if (at.getTime() < now.getTime() + MIN_LIFETIME_MS) {
    throw fieldProblem('expiresAt', 'must be at least 1 minute in the future');
  }
  if (at.getTime() > now.getTime() + MAX_LIFETIME_MS) {
    throw fieldProblem('expiresAt', 'must be at most 366 days in the future');
  }
  return at;
}

/** Checks scopes, known to the vocabulary (the body schema), against the tenant's entitlements. */
function checkScopes(scopes: string[], entitlements: readonly string[]): void {
  const missing = scopes.map((s) => s.split(':')[0] ?? '').filter((m) => !entitlements.includes(m));
  if (missing.length > 0) {
    throw new HttpProblem(
      'entitlement_missing',
      `The tenant is not entitled to ${[...new Set(missing)].join(', ')}.`,
    );
  }
}

export async function createApiKey(
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  session: SessionPrincipal,
  input: { name: string; scopes: string[]; expiresAt: string; rateLimitPerMinute?: number | null },
): Promise<ApiKeyRecord & { secret: string }> {
  const expiresAt = checkExpiry(input.expiresAt, origin.at);
  checkScopes(input.scopes, scope.entitlements);
  const secret = generateToken('tnt_');
  const row: ApiKeyRow = {
    id: newId('key'),
    tenant_id: scope.tenantId,
    name: input.name,
    prefix: displayPrefix(secret),
    secret_hash: ctx.keyring.hashToken('token-hash', secret),
    previous_secret_hash: null,
    previous_valid_until: null,
    scopes: input.scopes,
    created_at: origin.at,
    created_by: session.userId,
    expires_at: expiresAt,
    last_used_at: null,
    revoked_at: null,
    rotated_at: null,
    rate_limit_per_minute: input.rateLimitPerMinute ?? null,
  };
  await ctx.db.transaction().execute(async (trx) => {
    await insertApiKey(trx, scope, row);
    await recordAudit(trx, origin, {
      action: 'api_key.create',
      tenantId: scope.tenantId,
      targetType: 'api_key',
      targetId: row.id,
      metadata: {
        name: row.name,
        prefix: row.prefix,
        scopes: row.scopes,
        expiresAt: expiresAt.toISOString(),
        rateLimitPerMinute: row.rate_limit_per_minute,
      },
    });
  });
  return { ...toKeyRecord(row, origin.at), secret };
}

export async function listApiKeys(
  ctx: AppContext,
  scope: TenantScope,
  query: PageQuery,
): Promise<Page<ApiKeyRecord>> {
  const now = ctx.now();
  return listPage(
    query,
    'key',
    (limit, after) => listApiKeyRows(ctx.db, scope, limit, after),
    (rows) => rows.map((row) => toKeyRecord(row, now)),
    { keyring: ctx.keyring, list: ['api-keys', scope.tenantId] },
  );
}

/**
 * A new secret for the same key ID. The old secret stops at once, or stays valid for the overlap;
 * only one previous secret is kept, so rotating again ends the earlier overlap. `rateLimitPerMinute`
 * absent keeps the key's limit; given (null: the global one) replaces it.
 */
export async function rotateApiKey(
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  id: string,
  input: { expiresAt?: string; previousSecretValidForSeconds?: number; rateLimitPerMinute?: number | null },
): Promise<ApiKeyRecord & { secret: string }> {
  const now = origin.at;
  const expiresAt = input.expiresAt === undefined ? undefined : checkExpiry(input.expiresAt, now);
  const overlapSeconds = input.previousSecretValidForSeconds ?? 0;
  const secret = generateToken('tnt_');
  const row = await ctx.db.transaction().execute(async (trx) => {
    const current = isIdOf('key', id) ? await findApiKeyRow(trx, scope, id, true) : undefined;
    if (!current) throw notFound('key');
    if (keyStatus(current, now) !== 'active') {
      throw new HttpProblem('conflict', `A ${keyStatus(current, now)} key cannot be rotated.`);
    }
    const updated = await updateApiKeyRow(trx, scope, id, {
      prefix: displayPrefix(secret),
      secret_hash: ctx.keyring.hashToken('token-hash', secret),
      previous_secret_hash: overlapSeconds > 0 ? current.secret_hash : null,
      previous_valid_until: overlapSeconds > 0 ? new Date(now.getTime() + overlapSeconds * 1000) : null,
      rotated_at: now,
      ...(expiresAt ? { expires_at: expiresAt } : {}),
      ...(input.rateLimitPerMinute === undefined ? {} : { rate_limit_per_minute: input.rateLimitPerMinute }),
    });
    await recordAudit(trx, origin, {
      action: 'api_key.rotate',
      tenantId: scope.tenantId,
      targetType: 'api_key',
      targetId: id,
      metadata: {
        name: updated.name,
        prefix: updated.prefix,
        previousSecretValidForSeconds: overlapSeconds,
        rateLimitPerMinute: updated.rate_limit_per_minute,
      },
    });
    return updated;
  });
  return { ...toKeyRecord(row, now), secret };
}

export async function revokeApiKey(
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  id: string,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const current = isIdOf('key', id) ? await findApiKeyRow(trx, scope, id, true) : undefined;
    if (!current) throw notFound('key');
    if (current.revoked_at) return;
    await updateApiKeyRow(trx, scope, id, {
      revoked_at: origin.at,
      previous_secret_hash: null,
      previous_valid_until: null,
    });
    await recordAudit(trx, origin, {
      action: 'api_key.revoke',
      tenantId: scope.tenantId,
      targetType: 'api_key',
      targetId: id,
      metadata: { name: current.name, prefix: current.prefix },
    });
  });
}

export function allowedScopes(entitlements: readonly string[]) {
  const modules = MODULE_KEYS.map((moduleKey) => ({
    moduleKey,
    levels: [...LEVELS],
    entitled: entitlements.includes(moduleKey),
  }));
  return {
    modules,
    scopes: modules
      .filter((m) => m.entitled)
      .flatMap((m) => m.levels.map((level) => `${m.moduleKey}:${level}`)),
  };
}
