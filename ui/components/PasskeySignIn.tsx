import type { SignInAnswer } from '../api-types.js';
import type { ApiError } from '../api.js';
import { passkeysSupported } from '../passkeys.js';
import { ErrorNotice } from './Notice.js';
import { PasskeyIcon } from './PasskeyIcon.js';
import { usePasskeySignIn } from './usePasskeySignIn.js';

/**
 * "Sign in with a passkey", and passkey autofill on the e-mail field above it (the field says
 * `autocomplete="username webauthn"`): both run while this is on the page, one at a time.
 */
export function PasskeySignIn({
  onSignedIn,
  onStart,
  words,
}: {
  onSignedIn: (answer: SignInAnswer) => void;
  /** A passkey ceremony begins: the password form's last error is no longer the news. */
  onStart: () => void;
  /** Words for failures that are not about passkeys (rate limits, the address), as for passwords. */
  words: (error: ApiError) => ApiError;
}) {
  const supported = passkeysSupported();
  const { phase, error, flow } = usePasskeySignIn(supported, { onSignedIn, onStart, words });

  if (!supported) {
    return (
      <p class="passkey-sign-in-off muted">
        This browser cannot use passkeys. Sign in with your e-mail address and password, or use a browser that
        supports passkeys.
      </p>
    );
  }
  const busy = phase !== 'idle';
  return (
    <div class="passkey-sign-in">
      <p class="divider" aria-hidden="true">
        <span>or</span>
      </p>
      <ErrorNotice error={error} />
      <button
        type="button"
        class="button button-block"
        disabled={busy}
        aria-busy={busy}
        onClick={() => void flow.current?.withButton()}
      >
        <PasskeyIcon />
        {phase === 'asking'
          ? 'Waiting for your passkey…'
          : phase === 'verifying'
            ? 'Signing in…'
            : 'Sign in with a passkey'}
      </button>
      <p class="field-hint">
        Your browser or phone asks for your fingerprint, face or screen lock. You can also choose a passkey
        from the suggestions of the e-mail field.
      </p>
    </div>
  );
}
