// Editing a connection (docs/api/events.md): its display name and its connector's fields, only what
// changed sent; a new receiver host unbinds the credentials and keeps what was queued as skipped, said
// beside the URL and again, as it is typed, before saving.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../common/api.js';
import { Dialog, FormActions } from '../common/Dialog.js';
import { useAction } from '../common/hooks.js';
import { ErrorNotice, Notice } from '../common/Notice.js';
import { routes, type Connection, type Connector } from '../common/routes.js';
import { destinationOf } from './destination.js';
import {
  BROKER_URL_LABEL,
  changesOf,
  ConnectionField,
  connectorWords,
  describedHint,
  DisplayNameField,
  fieldErrorText,
  fieldLabel,
  hostOf,
  namesAnyField,
  splitList,
  valuesOf,
  type CatalogField,
  type FieldWords,
} from './fields.js';
import { isOAuthConnection, withApplicableFields } from './status.js';

/**
 * Connectors whose bound credentials are sent to the receiver: a new host unbinds them (docs/api/events.md).
 */
const SENDS_CREDENTIALS = (connector: Connector): boolean =>
  connector.connectorKey !== 'webhook' && connector.configFields.some((f) => f.name === 'url');

/**
 * Editing a connection: its display name and its connector's config fields, starting from what it
 * has; only what changed is sent. `unbinds` says, as the URL is typed, that the credentials go.
 */
function useEditConnection(
  connection: Connection,
  connector: Connector,
  onSaved: (saved: Connection | null) => void,
) {
  const [displayName, setDisplayName] = useState(connection.displayName);
  const [values, setValues] = useState<Record<string, string>>(() => valuesOf(connector, connection));
  const form = useRef<HTMLFormElement>(null);

  const save = useAction(async () => {
    const body = changesOf(connector, connection, displayName, values);
    if (Object.keys(body).length === 0) return onSaved(null);
    onSaved(await api(routes.connections.edit, { params: { id: connection.id }, body }));
  });
  // After a refusal, focus goes to the first field it names.
  useEffect(() => {
    if (save.error) form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [save.error]);

  const before = hostOf(connection.config.url);
  const after = hostOf(values.url);
  const unbinds =
    connection.credentialsBound && SENDS_CREDENTIALS(connector) && before !== null && after !== null
      ? before !== after
      : false;
  const setValue = (name: string, value: string) => setValues((current) => ({ ...current, [name]: value }));
  return { displayName, setDisplayName, values, setValue, form, save, unbinds, before, after };
}

type EditConnection = ReturnType<typeof useEditConnection>;

/** What happens to what was queued when a new host unbinds the credentials, said beside the URL. */
const QUEUED_SKIPPED = (
  <>
    the deliveries already queued are kept as <strong>skipped</strong>: bind the credentials again, then use
    “Recover failed deliveries” with the skipped ones to send them.
  </>
);

/**
 * The URL of a connector whose credentials go to where it delivers, and what a new host does: a receiver
 * gets them with every request; a broker (destination.ts) gets its bound login when hubgate connects, and
 * its URL is described by the catalog (its schemes; no login in it).
 */
function urlWords(connector: Connector, field: CatalogField): FieldWords {
  if (destinationOf(connector) === 'broker') {
    return {
      label: BROKER_URL_LABEL,
      hint: (
        <>
          {describedHint(field)} A user and password bound to it go to the broker when hubgate connects, so a
          new host unbinds them, and {QUEUED_SKIPPED}
        </>
      ),
    };
  }
  return {
    label: fieldLabel('url'),
    hint: (
      <>
        The address each event is sent to. Its credentials go with every request, so a new host unbinds them,
        and {QUEUED_SKIPPED}
      </>
    ),
  };
}

/** The warning, as the URL is typed, that a new host unbinds credentials sent to the receiver or broker. */
function UnbindWarning({ connector, state }: { connector: Connector; state: EditConnection }) {
  if (!state.unbinds) return null;
  const broker = destinationOf(connector) === 'broker';
  return (
    <Notice tone="warning">
      The {broker ? 'broker' : 'receiver'} moves from <span class="mono">{state.before}</span> to{' '}
      <span class="mono">{state.after}</span>.{' '}
      {broker
        ? 'A bound user or password goes to the broker when hubgate connects, so hubgate unbinds the credentials'
        : 'Its credentials are sent with every delivery, so hubgate unbinds them'}
      : nothing is delivered until you bind them again. The deliveries already queued are kept as skipped;
      once the credentials are bound, “Recover failed deliveries” with the skipped ones sends them to the new
      host.
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
          words={
            field.name === 'url' && SENDS_CREDENTIALS(connector)
              ? urlWords(connector, field)
              : connectorWords(connector, field.name)
          }
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
  // An OAuth2 connection: its name and its throttle (withApplicableFields).
  const oauth = isOAuthConnection(connection);
  const applicable = withApplicableFields(connector);
  const state = useEditConnection(connection, applicable, onSaved);
  const { save } = state;
  const names = ['displayName', ...applicable.configFields.map((f) => f.name)];
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
          {oauth
            ? `A ${connector.name} connection: its provider and its authorization stay as they are.`
            : `A ${connector.name} connection. Deliveries already queued go to the new settings from their next attempt on.`}
        </p>
        <EditFields connector={applicable} state={state} />
        <UnbindWarning connector={applicable} state={state} />
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
