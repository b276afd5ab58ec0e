import { useEffect, useRef, useState } from 'preact/hooks';
import { WebAuthnAbortService } from '@simplewebauthn/browser';
import type { Passkey } from '../api-types.js';
import { useAction } from '../hooks.js';
import { isCancelled, registerPasskey, registrationFailure } from '../passkeys.js';
import { Dialog, FormActions } from './Dialog.js';
import { Field } from './Field.js';
import { ErrorNotice, Notice } from './Notice.js';

const NAME_MAX = 100;

/**
 * Adding a passkey (contract §10): an optional name, then the browser's own prompt (fingerprint,
 * face, screen lock, security key, or a password manager), then the server's check.
 */
export function PasskeyAddDialog({
  onClose,
  onAdded,
}: {
  onClose: () => void;
  onAdded: (passkey: Passkey) => void;
}) {
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
  const nameError = add.error?.forField('name') ? `Use 1 to ${NAME_MAX} characters, or none.` : undefined;

  return (
    <Dialog title="Add a passkey" onClose={onClose}>
      <form
        class="form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void add.run();
        }}
      >
        <p class="dialog-lead">
          Your browser asks where to keep the new passkey: this device (with its fingerprint, face or screen
          lock), your phone, a security key, or your password manager.
        </p>
        <Field
          label="Name (optional)"
          hint="Something that tells it apart, like “Work laptop”. Left empty, hubgate names it after the authenticator when it can tell which one it is."
          error={nameError}
        >
          {({ id, describedBy, invalid }) => (
            <input
              id={id}
              ref={nameInput}
              type="text"
              autoComplete="off"
              maxLength={NAME_MAX}
              value={name}
              readOnly={add.busy}
              aria-describedby={describedBy}
              aria-invalid={invalid || undefined}
              onInput={(event) => setName(event.currentTarget.value)}
            />
          )}
        </Field>
        {add.busy ? (
          <p class="loading passkey-progress" role="status">
            <span class="spinner" aria-hidden="true" />
            Waiting for your browser: follow its prompt to create the passkey…
          </p>
        ) : null}
        {cancelled ? (
          <Notice tone="warning">
            No passkey was added: the browser’s prompt was closed or timed out. Press “Create passkey” to try
            again.
          </Notice>
        ) : null}
        {nameError ? null : <ErrorNotice error={add.error} />}
        <FormActions
          busy={add.busy}
          onCancel={onClose}
          label="Create passkey"
          busyLabel="Creating…"
          cancelWhileBusy
        />
      </form>
    </Dialog>
  );
}
