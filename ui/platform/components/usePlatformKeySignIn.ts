import { useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../../api.js';
import { looksLikePlatformKey, rememberKey } from '../key.js';

const REFUSED =
  'hubgate refused that platform key: it was revoked, has expired, or was mistyped. Paste a valid key.';

/** Why a pasted value cannot be a platform key, in words; undefined when it could be one. */
function shapeProblem(value: string): string | undefined {
  if (!value) return 'Paste the platform key.';
  if (/^tnt_/.test(value))
    return 'That is a tenant API key (tnt_…). The console needs a platform key, which starts with plt_.';
  if (!value.startsWith('plt_'))
    return 'A platform key starts with plt_. Paste the whole key as "hubgate platform-key create" printed it.';
  if (/\s/.test(value)) return 'The key contains spaces or line breaks. Paste it again without them.';
  if (!looksLikePlatformKey(value))
    return 'That is not a whole platform key: after plt_ it has 38 letters and digits. Paste it again.';
  return undefined;
}

/**
 * Signing in to the console with a pasted platform key: its shape checked here, then the key tried
 * against the monitoring route before it is kept.
 */
export function usePlatformKeySignIn() {
  const [value, setValue] = useState('');
  const [show, setShow] = useState(false);
  const [fieldError, setFieldError] = useState<string | undefined>(undefined);
  const [failure, setFailure] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  const submit = async () => {
    const key = value.trim();
    const wrong = shapeProblem(key);
    setFailure(undefined);
    setFieldError(wrong);
    if (wrong) {
      input.current?.focus();
      return;
    }
    setBusy(true);
    try {
      await api('GET', '/api/v1/platform/monitoring', { bearer: key });
      setValue('');
      rememberKey(key);
    } catch (error) {
      const refused =
        error instanceof ApiError && (error.status === 401 || error.code === 'route_not_allowed');
      if (refused) {
        setFieldError(REFUSED);
        input.current?.focus();
      } else {
        setFailure(error instanceof ApiError ? error : new ApiError(0, 'unknown', String(error)));
      }
    } finally {
      setBusy(false);
    }
  };

  return { value, setValue, show, setShow, fieldError, failure, busy, input, submit };
}

export type PlatformKeySignIn = ReturnType<typeof usePlatformKeySignIn>;
