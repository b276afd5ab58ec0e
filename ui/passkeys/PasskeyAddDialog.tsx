// Adding a passkey (docs/api/passkeys.md): an optional name, the browser's own prompt, the server's check;
// used on the profile and right after accepting an invitation.
import { WebAuthnAbortService } from '@simplewebauthn/browser';
import type { RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Dialog, FormActions } from '../common/Dialog.js';
import { Field } from '../common/Field.js';
import { useAction } from '../common/hooks.js';
import { ErrorNotice, Notice } from '../common/Notice.js';
import type { Passkey } from '../common/routes.js';
import { isCancelled, registerPasskey, registrationFailure } from './ceremonies.js';

/**
 * Adding a passkey: its name, the browser's prompt and the server's check; `cancelled` when the
 * person closed the prompt. Typing starts in the name field.
 */
function usePasskeyAdd(onAdded: (passkey: Passkey) => void, onClose: () => void) {
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

const PASSKEY_NAME_MAX = 100;

/** A new passkey's optional name; read-only while the browser asks. */
function PasskeyNameField({
  value,
  onInput,
  error,
  readOnly,
  inputRef,
}: {
  value: string;
  onInput: (value: string) => void;
  error: string | undefined;
  readOnly: boolean;
  inputRef: RefObject<HTMLInputElement | null>;
}) {
  return (
    <Field
      label="Name (optional)"
      hint="Something that tells it apart, like “Work laptop”. Left empty, hubgate names it after the authenticator when it can tell which one it is."
      error={error}
    >
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          ref={inputRef}
          type="text"
          autoComplete="off"
          maxLength={PASSKEY_NAME_MAX}
          value={value}
          readOnly={readOnly}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/**
 * Adding a passkey (docs/api/passkeys.md): an optional name, then the browser's own prompt (fingerprint,
 * face, screen lock, security key, or a password manager), then the server's check.
 */
export function PasskeyAddDialog({
  onClose,
  onAdded,
}: {
  onClose: () => void;
  onAdded: (passkey: Passkey) => void;
}) {
  const { name, setName, cancelled, nameInput, add } = usePasskeyAdd(onAdded, onClose);
  const nameError = add.error?.forField('name')
    ? `Use 1 to ${PASSKEY_NAME_MAX} characters, or none.`
    : undefined;

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
        <PasskeyNameField
          value={name}
          onInput={setName}
          error={nameError}
          readOnly={add.busy}
          inputRef={nameInput}
        />
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
