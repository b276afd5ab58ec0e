import { WebAuthnAbortService } from '@simplewebauthn/browser';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Passkey } from '../api-types.js';
import { useAction } from '../hooks.js';
import { isCancelled, registerPasskey, registrationFailure } from '../passkeys.js';

/**
 * Adding a passkey: its name, the browser's prompt and the server's check; `cancelled` when the
 * person closed the prompt. Typing starts in the name field.
 */
export function usePasskeyAdd(onAdded: (passkey: Passkey) => void, onClose: () => void) {
  const [name, setName] = useState('');
  const [cancelled, setCancelled] = useState(false);
  const nameInput = useRef<HTMLInputElement>(null);
  useEffect(() => {
    nameInput.current?.focus();
    // Closed while the browser still asks: its prompt goes too.
    return () => WebAuthnAbortService.cancelCeremony();
  }, []);

  const add = useAction(async () => {
    setCancelled(false);
    try {
      const passkey = await registerPasskey(name.trim());
      onAdded(passkey);
      onClose();
    } catch (error) {
      if (isCancelled(error)) {
        setCancelled(true);
        return;
      }
      throw registrationFailure(error);
    }
  });
  return { name, setName, cancelled, nameInput, add };
}
