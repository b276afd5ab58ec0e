// The new-connection page (docs/operators/web-ui.md): a connector chosen from the catalog, then its fields,
// errors shown on each field; once created, the list opens its credentials dialog (an OAuth2 connection's
// page offers Connect instead).
import { useLocation } from 'preact-iso';
import { useEffect, useId, useMemo, useRef, useState } from 'preact/hooks';
import { api, withQuery } from '../common/api.js';
import { useAction, useResource } from '../common/hooks.js';
import { PageHeader } from '../common/Layout.js';
import { ErrorNotice, Loading, Notice } from '../common/Notice.js';
import { routes, type Connector } from '../common/routes.js';
import { mayManage, pageUrl } from '../common/viewer.js';
import {
  ConnectionField,
  connectorWords,
  DisplayNameField,
  fieldErrorText,
  initialValue,
  namesAnyField,
  splitList,
  valueOf,
} from './fields.js';
import { isOAuthConnection, withApplicableFields } from './status.js';

/** The create body from what was typed: lists split, numbers as numbers, empty optional fields left out. */
function bodyOf(connector: Connector, displayName: string, values: Record<string, string>) {
  const body: { connectorKey: string; displayName: string } & Record<string, unknown> = {
    connectorKey: connector.connectorKey,
    displayName: displayName.trim(),
  };
  for (const field of connector.configFields) {
    const value = valueOf(field, values[field.name] ?? '');
    if (value !== undefined) body[field.name] = value;
  }
  return body;
}

/**
 * The create-connection form for the `chosen` connector: what is typed, the request, and where the
 * focus goes after a refusal. Once created, the connections list opens its credentials dialog.
 */
function useNewConnection(chosen: Connector | undefined) {
  const { route } = useLocation();
  const [displayName, setDisplayName] = useState('');
  const [values, setValues] = useState<Record<string, string>>({});
  const form = useRef<HTMLFormElement>(null);

  // Choices start at the value their description names as the default (the http method: POST).
  useEffect(() => {
    if (!chosen) return;
    setValues((current) => {
      const next = { ...current };
      for (const field of chosen.configFields) {
        if (field.options && !field.options.includes(next[field.name] ?? '')) {
          next[field.name] = initialValue(field);
        }
      }
      return next;
    });
  }, [chosen]);

  const create = useAction(async (connector: Connector) =>
    api(routes.connections.create, { body: bodyOf(connector, displayName, values) }),
  );

  // After a refusal, focus goes to the first field it names, so the person lands on what to fix.
  useEffect(() => {
    if (!create.error) return;
    form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [create.error]);

  async function submit(event: Event) {
    event.preventDefault();
    if (!chosen) return;
    const connection = await create.run(chosen);
    if (!connection) return;
    // An OAuth2 connection is bound by authorizing (its page offers Connect), never by credentials.
    if (isOAuthConnection(connection)) route(pageUrl(`/connections/${encodeURIComponent(connection.id)}`));
    else route(withQuery(pageUrl('/connections'), { bind: connection.id }));
  }
  const choose = (key: string) => {
    create.setError(undefined);
    route(withQuery(pageUrl('/connections/new'), { connector: key }), true);
  };
  const setValue = (name: string, value: string) => setValues((current) => ({ ...current, [name]: value }));
  return { displayName, setDisplayName, values, setValue, form, create, submit, choose };
}

type NewConnection = ReturnType<typeof useNewConnection>;

/** The connector choice: one radio per catalog entry, named by the connector, described by its text. */
function ConnectorChoice({
  connectors,
  chosen,
  onChoose,
}: {
  connectors: Connector[];
  chosen: string | undefined;
  onChoose: (key: string) => void;
}) {
  const base = useId();
  return (
    <fieldset class="connector-choice">
      <legend>Connector</legend>
      <p class="field-hint">Where the events go, and how they are delivered.</p>
      <div class="connector-options">
        {connectors.map((connector) => {
          const nameId = `${base}-${connector.connectorKey}-name`;
          const descriptionId = `${base}-${connector.connectorKey}-description`;
          return (
            <label
              key={connector.connectorKey}
              class={`connector-option${connector.enabled ? '' : ' connector-option-off'}`}
            >
              <input
                type="radio"
                name="connectorKey"
                value={connector.connectorKey}
                checked={chosen === connector.connectorKey}
                disabled={!connector.enabled}
                required
                aria-labelledby={nameId}
                aria-describedby={descriptionId}
                onChange={() => onChoose(connector.connectorKey)}
              />
              <span class="connector-option-text">
                <span class="connector-option-name" id={nameId}>
                  {connector.name}
                </span>
                <span class="connector-option-description" id={descriptionId}>
                  {connector.enabled
                    ? connector.description
                    : `${connector.description} Switched off by the platform operator.`}
                </span>
              </span>
            </label>
          );
        })}
      </div>
    </fieldset>
  );
}

/** The fields of the chosen connector, after the display name every connection has. */
function NewConnectionFields({ chosen, state }: { chosen: Connector; state: NewConnection }) {
  const { create, values } = state;
  const eventTypes = splitList(values.eventTypes ?? '');
  return (
    <>
      <DisplayNameField value={state.displayName} onInput={state.setDisplayName} error={create.error} />
      {chosen.configFields.map((field) => (
        <ConnectionField
          key={`${chosen.connectorKey}-${field.name}`}
          field={field}
          value={values[field.name] ?? ''}
          error={fieldErrorText(create.error, field.name, field.type === 'array' ? eventTypes : undefined)}
          onInput={(value) => state.setValue(field.name, value)}
          words={connectorWords(chosen, field.name)}
        />
      ))}
    </>
  );
}

/** The create-connection form: the connector, then its fields, then Create or Cancel. */
function NewConnectionForm({
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
        <a class="button" href={pageUrl('/connections')}>
          Cancel
        </a>
      </div>
    </form>
  );
}

/**
 * Create a connection (docs/operators/web-ui.md): the chosen connector's fields, errors shown on each field.
 */
export function NewConnectionPage() {
  const { query } = useLocation();
  const readOnly = !mayManage();
  const catalog = useResource((signal) => api(routes.hub.connectors, { signal }), 'catalog');
  const connectors = catalog.data?.data ?? [];
  const found = connectors.find((c) => c.connectorKey === query.connector && c.enabled);
  // One object per connector: the form's effects depend on it.
  const chosen = useMemo(() => (found ? withApplicableFields(found) : undefined), [found]);
  const state = useNewConnection(chosen);

  let body;
  if (readOnly) {
    body = (
      <Notice tone="warning">
        Your role can see connections but not create them. Ask an administrator of your organization.
      </Notice>
    );
  } else if (catalog.error) {
    body = <ErrorNotice error={catalog.error} title="The connector catalog could not be loaded." />;
  } else if (!catalog.data) {
    body = <Loading what="Loading the connectors" />;
  } else {
    body = <NewConnectionForm connectors={connectors} chosen={chosen} state={state} />;
  }
  return (
    <>
      <PageHeader
        title="Create a connection"
        description="A connection sends your organization’s events to a system you choose."
        back={{ href: pageUrl('/connections'), label: 'Connections' }}
      />
      {body}
    </>
  );
}
