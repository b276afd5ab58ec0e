import type { Kysely } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import { bindIssuedCredentials } from '../connections/connections.js';
import type { InitialAuthorization } from '../connections/connector.js';
import type { AppContext } from '../context.js';
import type { AuthorizationStatus, DB } from '../db/schema.js';
import { notFound } from '../http/problem.js';
import { insertAuthorization, updateAuthorization } from './store.js';

// An OAuth2 connection's authorization (docs/api/oauth.md): what the API shows of it, in oauth/'s
// table, while its tokens are the connection's credentials, which connections/ binds
// (docs/decisions/0070-oauth-authorizations-table.md).

/**
 * A new connection's authorization, in createConnection's transaction (the connector definition's
 * `authorization.insert`, providers.ts): `none` until someone authorizes it, or `authorized` with
 * what a client-credentials provider granted as it was created.
 */
export async function insertInitialAuthorization(
  trx: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
  initial: InitialAuthorization | undefined,
): Promise<void> {
  await insertAuthorization(trx, scope, {
    connection_id: connectionId,
    tenant_id: scope.tenantId,
    status: initial ? 'authorized' : 'none',
    scopes: initial?.scopes ?? [],
    expires_at: initial?.expiresAt ?? null,
    refreshing_until: null,
  });
}

/**
 * Binds an OAuth2 connection's tokens, or marks its authorization expired, in the caller's
 * transaction with the connection's row locked for update: the tokens are sealed as its credentials
 * (connections/), and only the status, scopes and expiry are stored where the API reads them.
 * `credentials` undefined leaves the stored tokens as they are.
 */
export async function setAuthorization(
  trx: Kysely<DB>,
  scope: TenantScope,
  id: string,
  at: Date,
  change: {
    status: AuthorizationStatus;
    scopes?: string[];
    expiresAt?: Date | null;
    credentials?: Record<string, unknown>;
  },
  keyring: AppContext['keyring'],
): Promise<void> {
  if (change.credentials) await bindIssuedCredentials(trx, scope, id, at, change.credentials, keyring);
  const changed = await updateAuthorization(trx, scope, id, {
    status: change.status,
    ...(change.scopes ? { scopes: JSON.stringify(change.scopes) } : {}),
    ...(change.expiresAt !== undefined ? { expires_at: change.expiresAt } : {}),
    // A refresh still out used the tokens these replace: its answer must not be written over them
    // (it finds its lease gone, tokens.ts), nor, refused, mark these expired.
    ...(change.credentials ? { refreshing_until: null } : {}),
  });
  if (!changed) throw notFound('connection');
}
