import { decide } from '../access/decide.js';
import type { TenantScope } from '../access/scope.js';
import type { AppContext } from '../context.js';
import { AUTHORIZE_RULE, type OwnerReturn } from '../oauth/authorize.js';
import { mintPortalCode } from './sessions.js';
import { findPortalSessionById } from './store.js';
import { portalPrincipalOf } from './token-verifier.js';

/**
 * The portal page an authorization returns to, in a tab of its own without the portal's token: a
 * new single-use code of the session in the fragment (never sent to a server), or, when the session
 * has ended, the portal's first page saying so and no code.
 */
async function portalPage(
  ctx: Pick<AppContext, 'db' | 'keyring' | 'config'>,
  scope: TenantScope,
  sessionId: string,
  at: Date,
  connectionId: string | null,
  error: string | undefined,
): Promise<string> {
  const tenantPath = `/portal/${encodeURIComponent(scope.tenantId)}`;
  const code = await mintPortalCode(ctx.db, ctx.keyring, scope, sessionId, at);
  if (code === null) {
    const ended = new URL(tenantPath, ctx.config.publicUrl);
    ended.searchParams.set(
      'authorizationError',
      error === undefined ? 'Your portal session has ended.' : `${error} Your portal session has ended.`,
    );
    return ended.href;
  }
  const path = connectionId ? `${tenantPath}/connections/${encodeURIComponent(connectionId)}` : tenantPath;
  const url = new URL(path, ctx.config.publicUrl);
  if (error === undefined) url.searchParams.set('authorized', 'true');
  else url.searchParams.set('authorizationError', error);
  url.hash = `code=${code}`;
  return url.href;
}

/**
 * A portal session's authorization coming back (docs/api/portal.md): the session must still be live,
 * still reach `manage` within the tenant's entitlements and still include the connection, all checked
 * now; the binding is audited as the portal's (`actorType: "portal"`, the session, its subject).
 */
export function portalAuthorizationReturn(ctx: Pick<AppContext, 'db' | 'keyring' | 'config'>): OwnerReturn {
  return async (state, scope, request) => {
    const sessionId = state.portal_session_id ?? '';
    const found = await findPortalSessionById(ctx.db, scope, sessionId);
    const principal = found ? portalPrincipalOf(found, request.at) : null;
    const page = (connectionId: string | null, error?: string) =>
      portalPage(ctx, scope, sessionId, request.at, connectionId, error);
    if (!principal) return { refused: await page(null, 'Nothing was bound.') };
    if (!decide(AUTHORIZE_RULE.access, principal).allowed) {
      return {
        refused: await page(
          null,
          'This portal session may not authorize connections now; nothing was bound.',
        ),
      };
    }
    if (principal.connectionIds && !principal.connectionIds.includes(state.connection_id)) {
      return {
        refused: await page(
          null,
          'This connection is no longer one of this portal session’s; nothing was bound.',
        ),
      };
    }
    return {
      origin: {
        actorType: 'portal',
        actorId: principal.sessionId,
        actorSubject: principal.subject,
        ip: request.ip,
        requestId: request.requestId,
        at: request.at,
      },
      again: 'start again with Authorize',
      page: (error) => page(state.connection_id, error),
    };
  };
}
