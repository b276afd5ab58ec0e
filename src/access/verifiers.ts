import type { AppContext } from '../context.js';
import { createPlatformKeyVerifier } from '../keys/platform-keys.js';
import type { CredentialVerifiers } from './authenticate.js';
import { resolveSession } from './sessions.js';

/** The credential checks the gate uses, wired to the app's database, keyring and key cache. */
export function createCredentialVerifiers(ctx: AppContext): CredentialVerifiers {
  return {
    platformKey: createPlatformKeyVerifier(ctx.db, ctx.keyring),
    tenantKey: (token, now) => ctx.tenantKeys.verify(token, now),
    session: (token, now) => resolveSession(ctx, token, now),
  };
}
