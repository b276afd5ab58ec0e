import type { Passkey } from '../api-types.js';
import { Dialog, FormActions } from './Dialog.js';
import { ErrorNotice, Notice } from './Notice.js';
import { PASSKEY_NAME_MAX, PasskeyNameField } from './PasskeyNameField.js';
import { usePasskeyAdd } from './usePasskeyAdd.js';

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
