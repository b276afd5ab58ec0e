// "Sign in with a passkey" on the sign-in page, and autofill in the e-mail field while the page is
// open (docs/api/passkeys.md).
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiError } from '../common/api.js';
import { ErrorNotice } from '../common/Notice.js';
import type { SignInAnswer } from '../common/routes.js';
import { passkeySignIn, passkeysSupported, signInFailure, type SignInPhase } from './ceremonies.js';
import { PasskeyIcon } from './PasskeyIcon.js';

interface Handlers {
  onSignedIn: (answer: SignInAnswer) => void;
  onStart: () => void;
  words: (error: ApiError) => ApiError;
}

/**
 * Passkey sign-in while the component is on the page (where the browser `supported` it): autofill
 * runs from the start; `flow.current.withButton()` asks by the button instead.
 */
function usePasskeySignIn(supported: boolean, handlers: Handlers) {
  const [phase, setPhase] = useState<SignInPhase>('idle');
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const latest = useRef(handlers);
  latest.current = handlers;
  const flow = useRef<ReturnType<typeof passkeySignIn> | null>(null);

  useEffect(() => {
    if (!supported) return;
    const started = passkeySignIn({
      onSignedIn: (answer) => latest.current.onSignedIn(answer),
      onError: (reason) =>
        setError(reason === undefined ? undefined : signInFailure(reason, latest.current.words)),
      onPhase: (next) => {
        if (next !== 'idle') latest.current.onStart();
        setPhase(next);
      },
    });
    flow.current = started;
    started.startAutofill();
    return () => started.stop();
  }, [supported]);
  return { phase, error, flow };
}

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
