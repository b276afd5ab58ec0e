import { useState } from 'preact/hooks';
import type { PasswordSignInState } from '../api-types.js';
import { api, ApiError } from '../api.js';
import { useAction } from '../hooks.js';
import { PASSWORD_SIGN_IN } from '../passkeys.js';

/** Turning password sign-in on or off: what was asked while the server answers, and what it said. */
export function usePasswordSwitch(onChanged: (state: PasswordSignInState) => void) {
  const [said, setSaid] = useState<string | null>(null);
  // What the person asked for shows while the server answers; a refusal shows the old state again.
  const [asked, setAsked] = useState<boolean | null>(null);
  const change = useAction(async (next: boolean) => {
    setSaid(null);
    setAsked(next);
    try {
      const state = await api<PasswordSignInState>('PUT', PASSWORD_SIGN_IN, { body: { enabled: next } });
      onChanged(state);
      setSaid(
        state.enabled
          ? 'Password sign-in is on: your e-mail address and password work again.'
          : 'Password sign-in is off: sign in with a passkey from now on.',
      );
    } catch (error) {
      if (error instanceof ApiError && error.code === 'conflict') {
        throw new ApiError(
          error.status,
          error.code,
          'Password sign-in stays on: add a passkey first, or you could not sign in at all.',
          [],
          error.requestId,
        );
      }
      throw error;
    } finally {
      setAsked(null);
    }
  });
  return { said, asked, change };
}
