// The operator console's credential (docs/operators/web-ui.md): a `plt_` key pasted once, kept in this tab's
// sessionStorage only (never localStorage, the URL or a cookie), sent as Bearer, forgotten on
// "sign out". Another tab has to paste it again; closing the tab forgets it.

import { signal } from '@preact/signals';
import { api, ApiError, type Answer, type Args, type Input } from '../common/api.js';
import type { RouteSpec } from '../common/routes.js';

/** A route of the table that takes a platform key. */
type PlatformRoute = RouteSpec & { auth: 'platform' };

const STORAGE_KEY = 'hubgate.platformKey';

function stored(): string | null {
  try {
    return window.sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

/** The key this tab holds, or null. */
export const platformKey = signal<string | null>(stored());
/** Why the console asks for a key again (a key refused, or signed out), for the key page to say. */
export const keyProblem = signal<string | null>(null);

export function rememberKey(key: string): void {
  platformKey.value = key;
  keyProblem.value = null;
  try {
    window.sessionStorage.setItem(STORAGE_KEY, key);
  } catch {
    // Storage refused (private mode): the key lives in this page's memory only.
  }
}

export function forgetKey(reason: string | null): void {
  platformKey.value = null;
  keyProblem.value = reason;
  try {
    window.sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // nothing stored
  }
}

/**
 * The shape of a platform key secret (docs/api/authentication.md): refuse a paste that cannot be one, before
 * sending it.
 */
export const looksLikePlatformKey = (value: string): boolean => /^plt_[0-9A-Za-z]{38}$/.test(value);

/**
 * A platform API call with the tab's key. A 401 means the key was revoked, expired or never was
 * one: it is forgotten, and the console asks for a key again, saying why.
 */
export async function platformApi<R extends PlatformRoute>(
  route: R,
  ...[input]: Args<Omit<Input<R>, 'bearer'>>
): Promise<Answer<R>> {
  const key = platformKey.value;
  if (!key) throw new ApiError(401, 'unauthenticated', 'Paste a platform key to use the console.');
  try {
    return await api(route, ...([{ ...input, bearer: key }] as Args<Input<R>>));
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      forgetKey(
        'hubgate refused that platform key: it was revoked, has expired, or was mistyped. Paste a valid key.',
      );
    } else if (error instanceof ApiError && error.code === 'route_not_allowed') {
      forgetKey(
        'That is not a platform key: the console needs a plt_ key, made with "hubgate platform-key create".',
      );
    }
    throw error;
  }
}
