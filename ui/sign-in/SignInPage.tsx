// The sign-in page (docs/operators/web-ui.md): e-mail and password first, then a passkey, then single sign-on
// where it is on; every failure said in words, and back to the page the person was going to.
import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, inMinutes, routeUrl } from '../common/api.js';
import { TextField } from '../common/Field.js';
import { useAction, useResource, useTitle } from '../common/hooks.js';
import { ErrorNotice, Notice } from '../common/Notice.js';
import { routes, type SessionAnswer } from '../common/routes.js';
import { safeNext, session, signedIn, signInReason } from '../common/session.js';
import { passkeysSupported } from '../passkeys/ceremonies.js';
import { PasskeySignIn } from '../passkeys/PasskeySignIn.js';

/** What a failed sign-in means, in words (docs/operators/web-ui.md). */
function signInFailure(error: ApiError): ApiError {
  const say = (message: string) =>
    new ApiError(error.status, error.code, message, error.fieldErrors, error.requestId);
  switch (error.code) {
    case 'invalid_credentials':
      return say('The e-mail address or password is wrong.');
    case 'rate_limited':
      return say(
        error.retryAfterSeconds === null
          ? 'Too many failed sign-ins for this account. Try again later.'
          : `Too many failed sign-ins for this account. It is locked for ${inMinutes(error.retryAfterSeconds)}.`,
      );
    case 'csrf_failed':
      // Login checks the Origin: a page opened at another address than PUBLIC_URL cannot sign in.
      return say(
        `hubgate does not accept sign-ins from ${window.location.origin}. Open it at the address it was set up with (its PUBLIC_URL), for example the one in the setup link.`,
      );
    case 'password_sign_in_disabled':
      return say('Password sign-in is turned off for this account. Sign in with a passkey instead.');
    default:
      return error;
  }
}

/**
 * Signing in with a password, and where every way of signing in ends (`arrive`): the session
 * known, and back at `next`. Someone already signed in goes there at once.
 */
function useSignIn(next: string) {
  const { route } = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');

  // Someone already signed in has nothing to do here.
  useEffect(() => {
    if (session.value) route(next, true);
  }, [next, route]);

  /** Where every way of signing in ends: the session known, and back where the person was going. */
  const arrive = (answer: SessionAnswer) => {
    signedIn(answer);
    route(next, true);
  };

  const signIn = useAction(async () => {
    try {
      const answer = await api(routes.auth.login, { body: { email, password } });
      arrive(answer);
    } catch (error) {
      setPassword('');
      throw error instanceof ApiError ? signInFailure(error) : error;
    }
  });
  return { email, setEmail, password, setPassword, signIn, arrive };
}

type SignIn = ReturnType<typeof useSignIn>;

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
function SignInNotices({ sso, setupRequired }: { sso: string | undefined; setupRequired: boolean }) {
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

/** E-mail address and password; the e-mail field also offers passkeys (autofill). */
function PasswordSignInForm({ state }: { state: SignIn }) {
  const { signIn } = state;
  return (
    <form
      class="form"
      onSubmit={(event) => {
        event.preventDefault();
        void signIn.run();
      }}
    >
      <TextField
        label="E-mail address"
        type="email"
        name="email"
        // "webauthn": the browser offers passkeys among this field's suggestions (autofill).
        autoComplete="username webauthn"
        required
        maxLength={254}
        value={state.email}
        onValue={state.setEmail}
      />
      <TextField
        label="Password"
        type="password"
        name="password"
        autoComplete="current-password"
        required
        maxLength={1024}
        value={state.password}
        onValue={state.setPassword}
      />
      <ErrorNotice error={signIn.error} />
      <button
        type="submit"
        class="button button-primary button-block"
        disabled={signIn.busy}
        aria-busy={signIn.busy}
      >
        {signIn.busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}

/**
 * "Sign in with SSO" (docs/operators/sso.md), shown only when the server says single sign-on is on. It is a
 * full navigation, not a fetch: the browser adds its Kerberos ticket only to a page it loads, and the
 * server answers with the session cookies and a redirect to `next`, or with a page that comes back
 * here saying why not (`?sso=unavailable`, `?sso=refused`).
 */
function SsoSignIn({ next, divider }: { next: string; divider: boolean }) {
  const methods = useResource((signal) => api(routes.auth.methods, { signal }), 'auth-methods');
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
          window.location.assign(routeUrl(routes.auth.ssoNegotiate, { query: { returnTo: next } }));
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

export function SignInPage() {
  useTitle('Sign in');
  const { query } = useLocation();
  const next = safeNext(query.next);
  const setup = useResource((signal) => api(routes.setup.status, { signal }), 'setup');
  const state = useSignIn(next);
  return (
    <section class="card card-narrow" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">Sign in</h1>
      <SignInNotices sso={query.sso} setupRequired={Boolean(setup.data?.required)} />
      <PasswordSignInForm state={state} />
      {/* Other ways to sign in join here, below the password form: passkeys, then single sign-on. */}
      <PasskeySignIn
        words={signInFailure}
        onStart={() => state.signIn.setError(undefined)}
        onSignedIn={state.arrive}
      />
      {/* Without passkeys there is no "or" above: single sign-on brings its own. */}
      <SsoSignIn next={next} divider={!passkeysSupported()} />
    </section>
  );
}
