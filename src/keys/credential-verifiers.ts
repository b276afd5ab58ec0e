import type { CredentialVerifiers } from '../access/authenticate.js';
import { resolveSession } from '../access/sessions.js';
import type { AppContext } from '../context.js';
import type { TenantKeyVerifier } from './key-verifier.js';
import { createPlatformKeyVerifier } from './platform-keys.js';

/**
 * The credential checks the gate uses, wired to the app's database, keyring and key cache. Portal
 * tokens (portal/) and MCP clients' access tokens (mcp-oauth/) are checked above keys/: the
 * composition root hands their checks in.
 */
export function createCredentialVerifiers(
  ctx: AppContext,
  tenantKeys: TenantKeyVerifier,
  portal: CredentialVerifiers['portal'],
  mcpAccess: CredentialVerifiers['mcpAccess'],
): CredentialVerifiers {
  return {
    platformKey: createPlatformKeyVerifier(ctx.db, ctx.keyring),
    tenantKey: (token, now) => tenantKeys.verify(token, now),
    session: (token, now) => resolveSession(ctx, token, now),
    portal,
    mcpAccess,
  };
}
