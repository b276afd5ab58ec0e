import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, withQuery } from '../api.js';
import type { Connection, Connector, Page } from '../api-types.js';
import {
  ConnectionField,
  fieldErrorText,
  fieldHint,
  initialValue,
  namesAnyField,
  splitList,
} from '../components/ConnectionField.js';
import { Field } from '../components/Field.js';
import { Loading } from '../components/Loading.js';
import { ErrorNotice, Notice } from '../components/Notice.js';
import { PageHeader } from '../components/PageHeader.js';
import { useAction, useResource } from '../hooks.js';
import { session } from '../session.js';

const CATALOG = '/api/v1/integration-hub/connectors';

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

/** The create body from what was typed: lists split, empty optional fields left out. */
function bodyOf(connector: Connector, displayName: string, values: Record<string, string>) {
  const body: Record<string, unknown> = {
    connectorKey: connector.connectorKey,
    displayName: displayName.trim(),
  };
  for (const field of connector.configFields) {
    const value = (values[field.name] ?? '').trim();
    if (field.type === 'array') {
      const items = splitList(value);
      if (items.length > 0) body[field.name] = items;
    } else if (value !== '' || field.required) {
      body[field.name] = value;
    }
  }
  return body;
}

/** Create a connection (contract §12): the chosen connector's fields, errors shown on each field. */
export function NewConnectionPage() {
  const { query, route } = useLocation();
  const readOnly = session.value?.user.role === 'MEMBER';
  const catalog = useResource((signal) => api<Page<Connector>>('GET', CATALOG, { signal }), 'catalog');
  const connectors = catalog.data?.data ?? [];
  const chosen = connectors.find((c) => c.connectorKey === query.connector && c.enabled);

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
    api<Connection>('POST', '/api/v1/integrations/connections', {
      body: bodyOf(connector, displayName, values),
    }),
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
    if (connection) route(withQuery('/connections', { bind: connection.id }));
  }

  const choose = (key: string) => {
    create.setError(undefined);
    route(withQuery('/connections/new', { connector: key }), true);
  };

  const header = (
    <PageHeader
      title="Create a connection"
      description="A connection sends your organization’s events to a system you choose."
      back={{ href: '/connections', label: 'Connections' }}
    />
  );

  if (readOnly) {
    return (
      <>
        {header}
        <Notice tone="warning">
          Your role can see connections but not create them. Ask an administrator of your organization.
        </Notice>
      </>
    );
  }
  if (catalog.error) {
    return (
      <>
        {header}
        <ErrorNotice error={catalog.error} title="The connector catalog could not be loaded." />
      </>
    );
  }
  if (!catalog.data) {
    return (
      <>
        {header}
        <Loading what="Loading the connectors" />
      </>
    );
  }

  const fieldNames = ['displayName', ...(chosen?.configFields.map((f) => f.name) ?? [])];
  const onFields = namesAnyField(create.error, fieldNames);
  const eventTypes = splitList(values.eventTypes ?? '');

  return (
    <>
      {header}
      <form class="card form form-narrow" ref={form} onSubmit={(event) => void submit(event)}>
        <ConnectorChoice connectors={connectors} chosen={chosen?.connectorKey} onChoose={choose} />
        {chosen ? (
          <>
            <Field
              label="Display name"
              hint={fieldHint({ name: 'displayName', description: null })}
              error={fieldErrorText(create.error, 'displayName')}
            >
              {({ id, describedBy, invalid }) => (
                <input
                  id={id}
                  type="text"
                  name="displayName"
                  required
                  maxLength={200}
                  autoComplete="off"
                  value={displayName}
                  aria-describedby={describedBy}
                  aria-invalid={invalid || undefined}
                  onInput={(event) => setDisplayName(event.currentTarget.value)}
                />
              )}
            </Field>
            {chosen.configFields.map((field) => (
              <ConnectionField
                key={`${chosen.connectorKey}-${field.name}`}
                field={field}
                value={values[field.name] ?? ''}
                error={fieldErrorText(
                  create.error,
                  field.name,
                  field.type === 'array' ? eventTypes : undefined,
                )}
                onInput={(value) => setValues((current) => ({ ...current, [field.name]: value }))}
              />
            ))}
          </>
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
    </>
  );
}
