import type { Kysely } from 'kysely';
import { ROLES, type Role } from '../access/catalog.js';
import type { TenantKeyPrincipal } from '../access/principal.js';
import type { Keyring } from '../crypto/keyring.js';
import type { DB } from '../db/schema.js';
import { createLastUsedRecorder, createTokenRowCache, memoizedTokenHash } from '../keys/token-cache.js';
import { scopesWithinRole } from './authorization.js';
import { findAccessToken, recordGrantsUsed, type AccessTokenForVerification } from './store.js';

export interface McpAccessTokenVerifier {
  /** A promise only when the token's row must be read: an answer from the cache comes without one. */
  verify(token: string, now: Date): Promise<TenantKeyPrincipal | null> | TenantKeyPrincipal | null;
  /** Drops cached answers for a grant at once (this process revoked it). */
  forget(grantId: string): void;
  close(): Promise<void>;
}

const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);

/**
 * What an access token grants at `now`: the grant's scopes within its approving person's role now
 * (a demoted person's grants shrink; one no longer active ends them), as a key would hold them, on
 * the MCP route only (`grant`: docs/api/mcp.md). Pure.
 */
export function grantPrincipalOf(
  found: AccessTokenForVerification,
  hash: string,
  now: Date,
): TenantKeyPrincipal | null {
  const { row, entitlements } = found;
  const expiresAt = new Date(row.expires_at);
  if (row.revoked_at || expiresAt <= now || row.user_status !== 'active' || !isRole(row.user_role))
    return null;
  const scopes = scopesWithinRole(row.scopes, row.user_role);
  if (scopes.length === 0) return null;
  return {
    kind: 'tenant_key',
    keyId: row.id,
    prefix: `oat_${hash.slice(0, 8)}`,
    tenantId: row.tenant_id,
    scopes,
    entitlements,
    expiresAt,
    // A grant has no limit of its own: RATE_LIMIT_PER_MINUTE.
    rateLimitPerMinute: null,
    grant: { clientName: row.client_name },
  };
}

/**
 * Checks `oat_` tokens as tenant keys are checked (keys/key-verifier.ts): a row is trusted for
 * `cacheTtlMs`, half of the second within which a revoked grant must stop working everywhere.
 */
export function createMcpAccessTokenVerifier(
  db: Kysely<DB>,
  keyring: Keyring,
  timings: { cacheTtlMs: number; lastUsedFlushMs: number },
  onFlushError: (error: unknown) => void,
): McpAccessTokenVerifier {
  const tokenHash = memoizedTokenHash('oat_', (token) => keyring.hashToken('token-hash', token));
  const tokens = createTokenRowCache((hash) => findAccessToken(db, hash), timings.cacheTtlMs);
  const lastUsed = createLastUsedRecorder(
    (entries) => recordGrantsUsed(db, entries),
    timings.lastUsedFlushMs,
    onFlushError,
  );

  const grant = (found: AccessTokenForVerification | undefined, hash: string, now: Date) => {
    const principal = found ? grantPrincipalOf(found, hash, now) : null;
    if (principal) lastUsed.note(principal.keyId, now);
    return principal;
  };
  return {
    verify(token, now) {
      const hash = tokenHash(token);
      if (hash === null) return null;
      const found = tokens.lookup(hash, Date.now());
      return found instanceof Promise ? found.then((row) => grant(row, hash, now)) : grant(found, hash, now);
    },
    forget: tokens.forget,
    close: lastUsed.close,
  };
}
