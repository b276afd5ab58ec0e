import { useState } from 'preact/hooks';
import type { ApiKey, ApiKeyWithSecret } from '../api-types.js';
import { api, ApiError } from '../api.js';
import { useAction } from '../hooks.js';
import { expiresAtOf, expiryProblem, KEEP_EXPIRY } from './keyExpiry.js';

/** A rotation refused because the key is no longer active, said in words. */
function rotationFailure(error: ApiError): ApiError {
  if (error.code !== 'conflict') return error;
  return new ApiError(
    error.status,
    error.code,
    'This key is no longer active (it was revoked or has expired), so it cannot be rotated. Create a new key instead.',
    error.fieldErrors,
    error.requestId,
  );
}

/** The rotate form of a key: the overlap and expiry chosen, and the key with its new secret once rotated. */
export function useKeyRotate(apiKey: ApiKey, onRotated: () => void) {
  const [rotated, setRotated] = useState<ApiKeyWithSecret | null>(null);
  const [overlap, setOverlap] = useState(3600);
  const [expiry, setExpiry] = useState(KEEP_EXPIRY);
  const [checked, setChecked] = useState(false);

  const submit = useAction(async () => {
    try {
      const expiresAt = expiresAtOf(expiry);
      const key = await api<ApiKeyWithSecret>(
        'POST',
        `/api/v1/company/api-keys/${encodeURIComponent(apiKey.id)}/rotate`,
        { body: { previousSecretValidForSeconds: overlap, ...(expiresAt ? { expiresAt } : {}) } },
      );
      setRotated(key);
      onRotated();
    } catch (error) {
      if (error instanceof ApiError && error.code === 'conflict') onRotated();
      throw error instanceof ApiError ? rotationFailure(error) : error;
    }
  });
  const onSubmit = (event: Event) => {
    event.preventDefault();
    setChecked(true);
    if (expiryProblem(expiry)) return;
    void submit.run();
  };
  return { rotated, overlap, setOverlap, expiry, setExpiry, checked, submit, onSubmit };
}

export type KeyRotate = ReturnType<typeof useKeyRotate>;
