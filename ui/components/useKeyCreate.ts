import { useEffect, useRef, useState } from 'preact/hooks';
import type { AllowedScopesAnswer, ApiKeyWithSecret } from '../api-types.js';
import { api } from '../api.js';
import { useAction } from '../hooks.js';
import { DEFAULT_EXPIRY, expiresAtOf, expiryProblem } from './keyExpiry.js';
import { useFocusFirstInvalid } from './useFocusFirstInvalid.js';

/**
 * The form that creates a key: its name, scopes and expiry, checked on submit, and the key with its
 * secret once created. `allowed` is the allowed-scopes answer, once it is in.
 */
export function useKeyCreate(allowed: AllowedScopesAnswer | undefined, onCreated: () => void) {
  const [created, setCreated] = useState<ApiKeyWithSecret | null>(null);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Set<string>>(() => new Set());
  const [expiry, setExpiry] = useState(DEFAULT_EXPIRY);
  const [checked, setChecked] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const form = useFocusFirstInvalid(attempt);
  const nameInput = useRef<HTMLInputElement>(null);
  const ready = allowed !== undefined;
  // The form appears once the scopes are in: typing starts in its first field.
  useEffect(() => {
    if (ready) nameInput.current?.focus();
  }, [ready]);

  const submit = useAction(async () => {
    const order = allowed?.modules.flatMap((m) => m.levels.map((l) => `${m.moduleKey}:${l}`)) ?? [];
    const key = await api<ApiKeyWithSecret>('POST', '/api/v1/company/api-keys', {
      body: {
        name: name.trim(),
        scopes: [...scopes].sort((a, b) => order.indexOf(a) - order.indexOf(b)),
        expiresAt: expiresAtOf(expiry),
      },
    });
    setCreated(key);
    onCreated();
  });
  const onSubmit = (event: Event) => {
    event.preventDefault();
    setChecked(true);
    setAttempt((n) => n + 1);
    if (!name.trim() || scopes.size === 0 || expiryProblem(expiry)) return;
    void submit.run();
  };
  return {
    created,
    name,
    setName,
    scopes,
    setScopes,
    expiry,
    setExpiry,
    checked,
    form,
    nameInput,
    submit,
    onSubmit,
  };
}

export type KeyCreate = ReturnType<typeof useKeyCreate>;
