import { useEffect, useState } from 'preact/hooks';
import type { AuthMethods } from '../api-types.js';
import { api } from '../api.js';
import { useResource } from '../hooks.js';

/**
 * "Sign in with SSO" (contract §11), shown only when the server says single sign-on is on. It is a
 * full navigation, not a fetch: the browser adds its Kerberos ticket only to a page it loads, and the
 * server answers with the session cookies and a redirect to `next`, or with a page that comes back
 * here saying why not (`?sso=unavailable`, `?sso=refused`).
 */
export function SsoSignIn({ next, divider }: { next: string; divider: boolean }) {
  const methods = useResource(
    (signal) => api<AuthMethods>('GET', '/api/v1/auth/methods', { signal, anonymous: true }),
    'auth-methods',
  );
  const [leaving, setLeaving] = useState(false);

  useEffect(() => {
    // Without the answer there is no button: the other ways to sign in still work.
    if (methods.error) console.warn(`Single sign-on is not offered: ${methods.error.message}`);
  }, [methods.error]);

  useEffect(() => {
    // Back here from the next page, the browser may show this page as it was left: ready again.
    const ready = (event: PageTransitionEvent) => {
      if (event.persisted) setLeaving(false);
    };
    window.addEventListener('pageshow', ready);
    return () => window.removeEventListener('pageshow', ready);
  }, []);

  if (!methods.data?.sso) return null;
  return (
    <div class="sso-sign-in">
      {divider ? (
        <p class="divider" aria-hidden="true">
          <span>or</span>
        </p>
      ) : null}
      <button
        type="button"
        class="button button-block"
        disabled={leaving}
        aria-busy={leaving}
        onClick={() => {
          setLeaving(true);
          window.location.assign(`/api/v1/auth/sso/negotiate?returnTo=${encodeURIComponent(next)}`);
        }}
      >
        <svg class="sso-icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false">
          {/* An office building: the company's own login. */}
          <path
            d="M4 21V4.5L13 3v18M13 9l7 1.5V21M2 21h20M7.5 7.5h2M7.5 11h2M7.5 14.5h2M16 13.5h1.5M16 17h1.5"
            fill="none"
            stroke="currentColor"
            stroke-width="2"
            stroke-linecap="round"
            stroke-linejoin="round"
          />
        </svg>
        {leaving ? 'Signing in…' : 'Sign in with SSO'}
      </button>
      <p class="field-hint">Uses this computer’s company login: no password to type.</p>
    </div>
  );
}
