import { ErrorNotice } from './Notice.js';
import { TextField } from './TextField.js';
import type { SignIn } from './useSignIn.js';

/** E-mail address and password; the e-mail field also offers passkeys (autofill). */
export function PasswordSignInForm({ state }: { state: SignIn }) {
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
