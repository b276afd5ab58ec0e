import { useEffect, useRef, useState } from 'preact/hooks';
import type { SignInAnswer } from '../api-types.js';
import type { ApiError } from '../api.js';
import { passkeySignIn, signInFailure, type SignInPhase } from '../passkeys.js';

interface Handlers {
  onSignedIn: (answer: SignInAnswer) => void;
  onStart: () => void;
  words: (error: ApiError) => ApiError;
}

/**
 * Passkey sign-in while the component is on the page (where the browser `supported` it): autofill
 * runs from the start; `flow.current.withButton()` asks by the button instead.
 */
export function usePasskeySignIn(supported: boolean, handlers: Handlers) {
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
