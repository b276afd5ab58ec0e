import { useState } from 'preact/hooks';
import type { SetupAnswer } from '../api-types.js';
import { api, ApiError, inMinutes } from '../api.js';
import { useAction } from '../hooks.js';

export const MIN_PASSWORD = 12;

/** A refused setup, in words: a wrong or expired link, or too many of them. */
function setupFailure(error: ApiError): ApiError {
  const say = (message: string) =>
    new ApiError(error.status, error.code, message, error.fieldErrors, error.requestId);
  switch (error.code) {
    case 'invalid_credentials':
      return say(
        'This setup link is wrong or has expired. Restart hubgate (npm start) and open the new link it prints.',
      );
    case 'rate_limited':
      return say(
        `Too many wrong setup links from this address. Try again in ${inMinutes(error.retryAfterSeconds ?? 900)}.`,
      );
    default:
      return error;
  }
}

/** The first administrator's form (setup `token`): what is typed, checked on submit, then sent. */
export function useFirstAdmin(token: string, onDone: (answer: SetupAnswer) => void) {
  const [organizationName, setOrganizationName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [checked, setChecked] = useState(false);

  const tooShort = password.length < MIN_PASSWORD;
  const mismatch = repeat !== password;
  const submit = useAction(async () => {
    try {
      onDone(
        await api<SetupAnswer>('POST', '/api/v1/setup', {
          body: { token, organizationName, email, password },
          anonymous: true,
        }),
      );
    } catch (error) {
      throw error instanceof ApiError ? setupFailure(error) : error;
    }
  });
  const onSubmit = (event: Event) => {
    event.preventDefault();
    setChecked(true);
    if (!organizationName.trim() || !email || tooShort || mismatch) return;
    void submit.run();
  };
  const fields = { organizationName, setOrganizationName, email, setEmail, password, setPassword };
  return { ...fields, repeat, setRepeat, checked, tooShort, mismatch, submit, onSubmit };
}

export type FirstAdmin = ReturnType<typeof useFirstAdmin>;
