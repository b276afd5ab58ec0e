import { useLocation } from 'preact-iso';
import { api } from '../api.js';
import { PasskeySignIn } from '../components/PasskeySignIn.js';
import { PasswordSignInForm } from '../components/PasswordSignInForm.js';
import { SignInNotices } from '../components/SignInNotices.js';
import { SsoSignIn } from '../components/SsoSignIn.js';
import { signInFailure, useSignIn } from '../components/useSignIn.js';
import { useResource, useTitle } from '../hooks.js';
import { passkeysSupported } from '../passkeys.js';
import { safeNext } from '../session.js';

export function SignInPage() {
  useTitle('Sign in');
  const { query } = useLocation();
  const next = safeNext(query.next);
  const setup = useResource(
    (signal) => api<{ required: boolean }>('GET', '/api/v1/setup', { signal, anonymous: true }),
    'setup',
  );
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
