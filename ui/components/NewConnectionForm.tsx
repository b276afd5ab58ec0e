import type { Connector } from '../api-types.js';
import { namesAnyField } from './ConnectionField.js';
import { ConnectorChoice } from './ConnectorChoice.js';
import { NewConnectionFields } from './NewConnectionFields.js';
import { ErrorNotice } from './Notice.js';
import type { NewConnection } from './useNewConnection.js';

/** The create-connection form: the connector, then its fields, then Create or Cancel. */
export function NewConnectionForm({
  connectors,
  chosen,
  state,
}: {
  connectors: Connector[];
  chosen: Connector | undefined;
  state: NewConnection;
}) {
  const { create } = state;
  const fieldNames = ['displayName', ...(chosen?.configFields.map((f) => f.name) ?? [])];
  const onFields = namesAnyField(create.error, fieldNames);
  return (
    <form class="card form form-narrow" ref={state.form} onSubmit={(event) => void state.submit(event)}>
      <ConnectorChoice connectors={connectors} chosen={chosen?.connectorKey} onChoose={state.choose} />
      {chosen ? (
        <NewConnectionFields chosen={chosen} state={state} />
      ) : (
        <p class="muted">Choose a connector to see its settings.</p>
      )}
      {create.error && onFields ? (
        <div class="notice notice-error" role="alert">
          The connection was not created. Correct the marked field above, then try again.
        </div>
      ) : (
        <ErrorNotice error={create.error} title="The connection was not created." />
      )}
      <div class="form-actions">
        <button
          type="submit"
          class="button button-primary"
          disabled={!chosen || create.busy}
          aria-busy={create.busy}
        >
          {create.busy ? 'Creating…' : 'Create connection'}
        </button>
        <a class="button" href="/connections">
          Cancel
        </a>
      </div>
    </form>
  );
}
