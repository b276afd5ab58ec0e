import type { AllowedScopesAnswer } from '../api-types.js';
import { FormActions } from './Dialog.js';
import { keyCreateErrors } from './keyCreateErrors.js';
import { KeyExpiryPicker } from './KeyExpiryPicker.js';
import { KeyNameField } from './KeyNameField.js';
import { KeyScopePicker } from './KeyScopePicker.js';
import { ErrorNotice } from './Notice.js';
import type { KeyCreate } from './useKeyCreate.js';

/** The create-key form: name, scopes, expiry. */
export function KeyCreateForm({
  create,
  modules,
  onClose,
}: {
  create: KeyCreate;
  modules: AllowedScopesAnswer['modules'];
  onClose: () => void;
}) {
  const { nameError, scopesError, expiryError, otherError } = keyCreateErrors(create);
  return (
    <form class="form" ref={create.form} noValidate onSubmit={create.onSubmit}>
      <KeyNameField
        value={create.name}
        onInput={create.setName}
        error={nameError}
        inputRef={create.nameInput}
      />
      <KeyScopePicker
        modules={modules}
        selected={create.scopes}
        onChange={create.setScopes}
        error={scopesError}
      />
      <KeyExpiryPicker value={create.expiry} onChange={create.setExpiry} error={expiryError} />
      <ErrorNotice error={otherError} />
      <FormActions busy={create.submit.busy} onCancel={onClose} label="Create key" busyLabel="Creating…" />
    </form>
  );
}
