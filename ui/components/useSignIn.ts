import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import type { SessionAnswer } from '../api-types.js';
import { api, ApiError, inMinutes } from '../api.js';
import { useAction } from '../hooks.js';
import { session, signedIn } from '../session.js';

/** What a failed sign-in means, in words (contract §12). */
export function signInFailure(error: ApiError): ApiError {
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
export function useSignIn(next: string) {
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
  return { email, setEmail, password, setPassword, signIn, arrive };
}

export type SignIn = ReturnType<typeof useSignIn>;
