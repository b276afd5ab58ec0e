import { signInReason } from '../session.js';
import { Notice } from './Notice.js';

const REASONS = {
  expired: 'Your session has ended. Sign in again to continue.',
  'signed-out': 'You have signed out.',
} as const;

/**
 * Why single sign-on did not sign the person in: the server's negotiate route sends a browser back
 * here with `?sso=` when it offered no Kerberos ticket, or when hubgate refused the one it offered.
 * A Map, not an object: `?sso=constructor` must not find the properties every object has.
 */
const SSO_FAILURES = new Map<string, { title: string; text: string; hint?: string }>([
  [
    'unavailable',
    {
      title: 'Single sign-on did not happen.',
      text:
        'Your browser did not offer a Kerberos ticket. It offers one only on a computer signed in to your ' +
        'company’s domain, and only to sites it allows for integrated authentication: ask your IT ' +
        'department to allow this one.',
      // Chromium on Linux loads Kerberos only once its profile has seen a first Negotiate challenge.
      hint: 'First time in Chrome on Linux? It turns Kerberos on only after a site first asks: try once more.',
    },
  ],
  [
    'refused',
    {
      title: 'Single sign-on did not sign you in.',
      text: 'hubgate has no account for your company login, or it refused your Kerberos ticket. Ask your hubgate administrator.',
    },
  ],
]);

/** Why the person is on the sign-in page (signed out, session ended, single sign-on failed), and setup. */
export function SignInNotices({ sso, setupRequired }: { sso: string | undefined; setupRequired: boolean }) {
  const ssoFailure = SSO_FAILURES.get(sso ?? '');
  const reason = signInReason.value;
  return (
    <>
      {reason ? <Notice tone={reason === 'expired' ? 'warning' : 'success'}>{REASONS[reason]}</Notice> : null}
      {ssoFailure ? (
        <Notice tone="warning">
          <p>
            <strong>{ssoFailure.title}</strong> {ssoFailure.text}
          </p>
          {ssoFailure.hint ? <p>{ssoFailure.hint}</p> : null}
        </Notice>
      ) : null}
      {setupRequired ? (
        <Notice tone="warning">
          hubgate is not set up yet. Open the setup link that <code>hubgate serve</code> printed when it
          started (it ends in <code>/setup#token=…</code>).
        </Notice>
      ) : null}
    </>
  );
}
