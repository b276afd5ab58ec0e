// The portal page's session (docs/api/portal.md): the single-use code of the link exchanged for a
// `ptl_` token, which is held in memory and, where the browser allows it, in this tab's
// sessionStorage, so that a reload or the way back from an OAuth provider finds it again. Framed on
// another site with third-party cookies blocked, Chromium makes sessionStorage throw: the page then
// works from memory alone, and a reload needs a new link.
import { signal } from '@preact/signals';
import { api, ApiError, onSessionEvent, setPortalToken } from '../common/api.js';
import { setTitleOwner } from '../common/hooks.js';
import { routes, type PortalSessionView } from '../common/routes.js';
import { enterPortal } from '../common/viewer.js';

export type PortalState =
  | { kind: 'starting' }
  | { kind: 'open'; view: PortalSessionView }
  /**
   * No session: `ended` (its time is up or it was ended: the view, when known, says by whom), `refused`
   * (the link's code was used, expired or withdrawn), `no-code` (opened without a link), `failed`
   * (hubgate could not be asked).
   */
  | { kind: 'ended'; view: PortalSessionView | null }
  | { kind: 'refused' }
  | { kind: 'no-code' }
  | { kind: 'failed'; error: ApiError };

export const portalState = signal<PortalState>({ kind: 'starting' });

/** The tenant in the page's address: `/portal/<tenantId>/…`. */
export const portalTenantOf = (path: string): string | null =>
  /^\/portal\/([^/]+)(?:\/|$)/.exec(path)?.[1] ?? null;

export const isPortalPath = (path: string): boolean => portalTenantOf(path) !== null;

const storageKey = (tenantId: string) => `hubgate.portal.${tenantId}`;

// Each access may throw (a framed page with storage blocked): storage is only ever an extra.
function stored(tenantId: string): string | null {
  try {
    return window.sessionStorage.getItem(storageKey(tenantId));
  } catch {
    return null;
  }
}
function store(tenantId: string, token: string | null): void {
  try {
    if (token === null) window.sessionStorage.removeItem(storageKey(tenantId));
    else window.sessionStorage.setItem(storageKey(tenantId), token);
  } catch {
    // Memory alone, then.
  }
}

/** A code taken from the address whose exchange has not answered yet: "Try again" needs it. */
let pendingCode: string | null = null;

/** The code of `#code=…`, taken out of the address bar at once (it is a secret, and works once). */
function takeCode(): string | null {
  const match = /(?:^#|&)code=([A-Za-z0-9_-]+)/.exec(window.location.hash);
  if (window.location.hash) {
    window.history.replaceState(window.history.state, '', window.location.pathname + window.location.search);
  }
  if (match?.[1]) pendingCode = match[1];
  return pendingCode;
}

let endTimer: ReturnType<typeof setTimeout> | undefined;

/** The session is over: the token is forgotten everywhere, and the page says so. */
function end(tenantId: string, view: PortalSessionView | null): void {
  clearTimeout(endTimer);
  setPortalToken(null);
  store(tenantId, null);
  portalState.value = { kind: 'ended', view };
}

// Timers hold at most about 24.8 days; a session lasts at most one.
const MAX_TIMER_MS = 2 ** 31 - 1;

function open(tenantId: string, token: string, view: PortalSessionView): void {
  setPortalToken(token);
  store(tenantId, token);
  enterPortal(tenantId, view.session.access);
  setTitleOwner(view.branding.name ?? view.tenant.name);
  // Any call answered 401 (revoked on any process, or expired) ends the page's session too.
  onSessionEvent((event) => {
    if (event === 'ended') end(tenantId, view);
  });
  clearTimeout(endTimer);
  const left = new Date(view.expiresAt).getTime() - Date.now();
  endTimer = setTimeout(() => end(tenantId, view), Math.min(Math.max(left, 0), MAX_TIMER_MS));
  portalState.value = { kind: 'open', view };
}

/** Exchanges the link's code: a new session, which replaces any this tab held. */
async function exchange(tenantId: string, code: string): Promise<void> {
  const { token, ...view } = await api(routes.portal.exchange, { body: { code } });
  pendingCode = null;
  if (view.tenant.id !== tenantId) portalState.value = { kind: 'refused' };
  else open(tenantId, token, view);
}

/** Asks again about the token this tab kept (a reload, the way back from a provider), if any. */
async function resume(tenantId: string): Promise<void> {
  const token = stored(tenantId);
  if (!token) {
    portalState.value = { kind: 'no-code' };
    return;
  }
  setPortalToken(token);
  open(tenantId, token, await api(routes.portal.session));
}

/**
 * Starts the portal of `tenantId`: with a code in the address, exchanges it; without one, resumes.
 * A refused code says the link no longer works; a refused token, that the session ended.
 */
export async function startPortal(tenantId: string): Promise<void> {
  const code = takeCode();
  try {
    await (code ? exchange(tenantId, code) : resume(tenantId));
  } catch (error) {
    // Only an answer uses the code up: after a network failure, "Try again" sends it once more.
    if (error instanceof ApiError && error.status !== 0) pendingCode = null;
    if (error instanceof ApiError && error.status === 401) {
      if (code) portalState.value = { kind: 'refused' };
      else end(tenantId, null);
      return;
    }
    setPortalToken(null);
    portalState.value = {
      kind: 'failed',
      error: error instanceof ApiError ? error : new ApiError(0, 'unknown', String(error)),
    };
  }
}
