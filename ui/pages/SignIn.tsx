import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ApiError, inMinutes } from '../api.js';
import type { SessionAnswer } from '../api-types.js';
import { PasskeySignIn } from '../components/PasskeySignIn.js';
import { SsoSignIn } from '../components/SsoSignIn.js';
import { TextField } from '../components/TextField.js';
import { ErrorNotice, Notice } from '../components/Notice.js';
import { useAction, useResource, useTitle } from '../hooks.js';
import { passkeysSupported } from '../passkeys.js';
import { safeNext, session, signedIn, signInReason } from '../session.js';

/** What a failed sign-in means, in words (contract §12). */
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

export function SignInPage() {
  useTitle('Sign in');
  const { query, route } = useLocation();
  const next = safeNext(query.next);
  const ssoFailure = SSO_FAILURES.get(query.sso ?? '');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const setup = useResource(
    (signal) => api<{ required: boolean }>('GET', '/api/v1/setup', { signal, anonymous: true }),
    'setup',
  );

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
      const answer = await api<SessionAnswer>('POST', '/api/v1/auth/login', {
        body: { email, password },
        anonymous: true,
      });
      arrive(answer);
    } catch (error) {
      setPassword('');
      throw error instanceof ApiError ? signInFailure(error) : error;
    }
  });

  const reason = signInReason.value;
  return (
    <section class="card card-narrow" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">Sign in</h1>
      {reason ? <Notice tone={reason === 'expired' ? 'warning' : 'success'}>{REASONS[reason]}</Notice> : null}
      {ssoFailure ? (
        <Notice tone="warning">
          <p>
            <strong>{ssoFailure.title}</strong> {ssoFailure.text}
          </p>
          {ssoFailure.hint ? <p>{ssoFailure.hint}</p> : null}
        </Notice>
      ) : null}
      {setup.data?.required ? (
        <Notice tone="warning">
          hubgate is not set up yet. Open the setup link that <code>hubgate serve</code> printed when it
          started (it ends in <code>/setup#token=…</code>).
        </Notice>
      ) : null}
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
          value={email}
          onValue={setEmail}
        />
        <TextField
          label="Password"
          type="password"
          name="password"
          autoComplete="current-password"
          required
          maxLength={1024}
          value={password}
          onValue={setPassword}
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
      {/* Other ways to sign in join here, below the password form: passkeys, then single sign-on. */}
      <PasskeySignIn words={signInFailure} onStart={() => signIn.setError(undefined)} onSignedIn={arrive} />
      {/* Without passkeys there is no "or" above: single sign-on brings its own. */}
      <SsoSignIn next={next} divider={!passkeysSupported()} />
    </section>
  );
}
