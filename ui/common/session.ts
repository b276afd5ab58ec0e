// Who is signed in, for the whole UI. The session lives in an HttpOnly cookie the page cannot read;
// this is only what the API said about it, and it is forgotten as soon as the API says it ended.

import { signal } from '@preact/signals';
import { api, ApiError, onSessionEvent, setCsrfToken } from './api.js';
import { routes, type SessionAnswer } from './routes.js';

/** undefined: not known yet; null: nobody is signed in. */
export const session = signal<SessionAnswer | null | undefined>(undefined);

/** Why the session could not be asked for (rate limited, database down, offline), if so. */
export const sessionProblem = signal<ApiError | null>(null);

/** Why the person is on the sign-in page, said there once. */
export type SignInReason = 'expired' | 'signed-out';
export const signInReason = signal<SignInReason | null>(null);

/** Set by the app: moves to a URL inside the UI without a reload. */
let navigate: (url: string, replace?: boolean) => void = (url) => window.location.assign(url);
export function setNavigator(go: (url: string, replace?: boolean) => void): void {
  navigate = go;
}
export const go = (url: string, replace = false): void => navigate(url, replace);

const KEY_MANAGING_ROLES = ['COMPANY_IT_ADMIN', 'EXECUTIVE', 'PLATFORM_ADMIN'];
export const canManageKeys = (answer: SessionAnswer | null | undefined): boolean =>
  Boolean(answer && KEY_MANAGING_ROLES.includes(answer.user.role));

export function signedIn(answer: SessionAnswer): void {
  setCsrfToken(answer.csrfToken);
  signInReason.value = null;
  session.value = answer;
}

/** Asks the server who this browser is; a 401 means nobody. */
export async function loadSession(): Promise<void> {
  try {
    signedIn(await api(routes.auth.session));
    sessionProblem.value = null;
  } catch (error) {
    // Only a 401 means nobody is signed in; a 429 or a 503 says nothing about the session.
    if (error instanceof ApiError && error.status !== 401) {
      sessionProblem.value = error;
      return;
    }
    sessionProblem.value = null;
    setCsrfToken(null);
    session.value = null;
  }
}

/**
 * Where sign-in sends the person back to: a path of this origin, never another site. `//host` and
 * `/\host` are other hosts to a browser, and control characters are dropped by URL parsing, so
 * anything but a plain path is refused.
 */
export function safeNext(next: string | null | undefined): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (!next || !/^\/(?![/\\])[^\u0000-\u001f\\]*$/.test(next)) return '/';
  const url = new URL(next, window.location.origin);
  // Dot segments are resolved only now (`/..//host` becomes `//host`): the result is checked again.
  const path = url.pathname;
  if (url.origin !== window.location.origin || path.startsWith('//') || path.startsWith('/sign-in'))
    return '/';
  return path + url.search + url.hash;
}

/**
 * The session is over (expired, revoked, signed out elsewhere): forget it and go to sign-in,
 * which says why, and comes back here afterwards.
 */
export function sessionEnded(reason: SignInReason): void {
  if (session.value === null && signInReason.value !== null) return;
  setCsrfToken(null);
  session.value = null;
  signInReason.value = reason;
  const here = window.location.pathname + window.location.search;
  go(here.startsWith('/sign-in') ? '/sign-in' : `/sign-in?next=${encodeURIComponent(here)}`, true);
}

export async function signOut(): Promise<void> {
  try {
    await api(routes.auth.logout);
  } finally {
    setCsrfToken(null);
    session.value = null;
    signInReason.value = 'signed-out';
    go('/sign-in', true);
  }
}

/**
 * Listens to the API client: a call refused with 401 ends the session here too; a 403
 * `role_forbidden` or `csrf_failed` asks who is signed in now (another tab may have signed in as
 * someone else), so the person's next try carries the current CSRF token.
 */
export function watchSession(): void {
  onSessionEvent((event) => (event === 'ended' ? sessionEnded('expired') : void loadSession()));
}
