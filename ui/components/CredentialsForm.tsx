import type { Connector } from '../api-types.js';
import { overlapText } from '../format.js';
import { namesAnyField } from './ConnectionField.js';
import { CredentialsFields } from './CredentialsFields.js';
import { FormActions } from './Dialog.js';
import { ErrorNotice, Notice } from './Notice.js';
import type { CredentialsBinding } from './useCredentialsBinding.js';

/** The form that binds (or replaces) a connection's credentials, saying what they are for. */
export function CredentialsForm({
  name,
  connector,
  rebind,
  justCreated,
  binding,
  onClose,
}: {
  name: string;
  connector: Connector;
  rebind: boolean;
  justCreated?: boolean;
  binding: CredentialsBinding;
  onClose: () => void;
}) {
  const { bind } = binding;
  const onFields = namesAnyField(
    bind.error,
    connector.credentialFields.map((f) => f.name),
  );
  return (
    <form class="form" onSubmit={(event) => void binding.submit(event)}>
      {justCreated ? (
        <Notice tone="success">
          “{name}” was created. It delivers nothing until its credentials are bound.
        </Notice>
      ) : null}
      <p class="muted dialog-intro">
        {connector.connectorKey === 'webhook'
          ? 'hubgate signs every delivery with this secret, so the receiver can tell it came from hubgate.'
          : `hubgate sends these with every delivery to ${connector.name}. They are stored encrypted and never shown again.`}
      </p>
      {rebind ? (
        <Notice tone="warning">
          {connector.rebindOverlapSeconds > 0
            ? `The current credentials keep working for ${overlapText(connector.rebindOverlapSeconds)} next to the new ones, so the receiver has time to switch.`
            : 'The new credentials replace the current ones at once.'}
        </Notice>
      ) : null}
      <CredentialsFields connector={connector} binding={binding} />
      {bind.error && onFields ? (
        <div class="notice notice-error" role="alert">
          The credentials were not bound. Correct the marked field above, then try again.
        </div>
      ) : (
        <ErrorNotice error={bind.error} />
      )}
      <FormActions
        busy={bind.busy}
        onCancel={onClose}
        label={rebind ? 'Replace credentials' : 'Bind credentials'}
        busyLabel="Binding…"
      />
    </form>
  );
}
