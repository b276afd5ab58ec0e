import type { Connection, Connector } from '../api-types.js';
import { ConnectionField, fieldErrorText, namesAnyField, splitList } from '../components/ConnectionField.js';
import { Dialog, FormActions } from '../components/Dialog.js';
import { DisplayNameField } from '../components/DisplayNameField.js';
import { ErrorNotice, Notice } from '../components/Notice.js';
import { useEditConnection, type EditConnection } from './useEditConnection.js';

/** The warning, as the URL is typed, that a new host unbinds credentials sent to the receiver. */
function UnbindWarning({ state }: { state: EditConnection }) {
  if (!state.unbinds) return null;
  return (
    <Notice tone="warning">
      The receiver moves from <span class="mono">{state.before}</span> to{' '}
      <span class="mono">{state.after}</span>. Its credentials are sent with every delivery, so hubgate
      unbinds them: nothing is delivered until you bind them again.
    </Notice>
  );
}

function EditFields({ connector, state }: { connector: Connector; state: EditConnection }) {
  const { save, values } = state;
  return (
    <>
      <DisplayNameField value={state.displayName} onInput={state.setDisplayName} error={save.error} />
      {connector.configFields.map((field) => (
        <ConnectionField
          key={field.name}
          field={field}
          value={values[field.name] ?? ''}
          error={fieldErrorText(
            save.error,
            field.name,
            field.type === 'array' ? splitList(values[field.name] ?? '') : undefined,
          )}
          onInput={(value) => state.setValue(field.name, value)}
        />
      ))}
    </>
  );
}

/** Edit a connection: the create form's fields, filled in; the answer says if credentials came unbound. */
export function EditDialog({
  connection,
  connector,
  onSaved,
  onClose,
}: {
  connection: Connection;
  connector: Connector;
  onSaved: (saved: Connection | null) => void;
  onClose: () => void;
}) {
  const state = useEditConnection(connection, connector, onSaved);
  const { save } = state;
  const names = ['displayName', ...connector.configFields.map((f) => f.name)];
  return (
    <Dialog title={`Edit “${connection.displayName}”`} onClose={onClose} wide>
      <form
        class="form"
        ref={state.form}
        onSubmit={(event) => {
          event.preventDefault();
          void save.run();
        }}
      >
        <p class="dialog-lead">
          A {connector.name} connection. Deliveries already queued go to the new settings from their next
          attempt on.
        </p>
        <EditFields connector={connector} state={state} />
        <UnbindWarning state={state} />
        {save.error && namesAnyField(save.error, names) ? (
          <div class="notice notice-error" role="alert">
            The changes were not saved. Correct the marked field above, then try again.
          </div>
        ) : (
          <ErrorNotice error={save.error} title="The changes were not saved." />
        )}
        <FormActions busy={save.busy} onCancel={onClose} label="Save changes" busyLabel="Saving…" />
      </form>
    </Dialog>
  );
}
