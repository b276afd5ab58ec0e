// The connect page's form (docs/api/connect-links.md): the fields the link left open, built from the
// page's answer with the connection forms' own fields (ui/connections/fields.tsx), a name for the
// connection, and Connect. A refusal is said on its field; a link that stopped working says so.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../common/api.js';
import { Field, TextField } from '../common/Field.js';
import { formatDate } from '../common/format.js';
import { useAction } from '../common/hooks.js';
import { ErrorNotice } from '../common/Notice.js';
import { routes, type ConnectCompleted, type ConnectField, type ConnectView } from '../common/routes.js';
import {
  ConnectionField,
  connectorWords,
  fieldErrorText,
  fieldLabel,
  initialValue,
  namesAnyField,
  splitList,
  valueOf,
  type FieldWords,
} from '../connections/fields.js';
import { completionOf, isOAuthConnector, offeredFields, onFormFields } from './link.js';

/** What the form sent, for the page to keep while the person is at an OAuth2 provider. */
export type Sent = ReturnType<typeof completionOf>;

/**
 * The form's state and its Connect: a 401 is a link that stopped working (`onUsed`), any other
 * refusal stays on the form with its field errors named as the form names them.
 */
function useCompletion(
  code: string,
  view: ConnectView,
  onDone: (answer: ConnectCompleted, sent: Sent) => void,
  onUsed: () => void,
) {
  const fields = offeredFields(view.connector.key, view.connector.fields);
  const [displayName, setDisplayName] = useState(view.displayName ?? '');
  // A choice starts at its default (the delivery order: not ordered), as the API applies it.
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(fields.filter((f) => f.options).map((f) => [f.name, initialValue(f)])),
  );
  const form = useRef<HTMLFormElement>(null);
  const complete = useAction(async () => {
    const sent = completionOf(code, fields, { displayName, values }, valueOf);
    try {
      onDone(await api(routes.connect.complete, { body: sent }), sent);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return onUsed();
      throw error instanceof ApiError ? onFormFields(error) : error;
    }
  });
  // After a refusal the focus goes to the first field it names, else to what it says.
  useEffect(() => {
    if (!complete.error) return;
    const target =
      form.current?.querySelector<HTMLElement>('[aria-invalid="true"]') ??
      form.current?.querySelector<HTMLElement>('.connect-refusal');
    target?.focus();
  }, [complete.error]);
  const setValue = (name: string, value: string) => setValues((current) => ({ ...current, [name]: value }));
  const submit = (event: Event) => {
    event.preventDefault();
    void complete.run();
  };
  return { fields, displayName, setDisplayName, values, setValue, form, complete, submit };
}

/**
 * The event type patterns as plain text: the connection forms' input offers the tenant's catalog of
 * names, which only a signed-in person may read.
 */
function EventTypesField({
  field,
  value,
  onInput,
  error,
}: {
  field: ConnectField;
  value: string;
  onInput: (value: string) => void;
  error?: string;
}) {
  return (
    <Field
      label={field.required ? 'Event types' : 'Event types (optional)'}
      hint={
        <>
          Patterns separated by commas, e.g. <code>employee.*, invoice.paid</code>; <code>*</code> matches any
          run of characters. Leave empty to receive every event.
        </>
      }
      error={error}
    >
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          type="text"
          name={field.name}
          class="mono"
          required={field.required}
          autoComplete="off"
          spellcheck={false}
          placeholder="employee.*, invoice.paid"
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/** A secret hubgate makes when it is left empty (a webhook's signing secret), and who then has it. */
const generatedWords = (field: ConnectField, brand: string): FieldWords => ({
  label: fieldLabel(field.name),
  hint: `Give your own if your system checks it, or leave it empty: hubgate then makes one, which is not shown here; ${brand} can give it to you.`,
});

/** One field the link left open, as the connection forms show it. */
function OpenField({
  field,
  view,
  brand,
  value,
  onInput,
  error,
}: {
  field: ConnectField;
  view: ConnectView;
  /** The name the page goes by: the branding's, else the tenant's. */
  brand: string;
  value: string;
  onInput: (value: string) => void;
  error: ApiError | undefined;
}) {
  const message = fieldErrorText(error, field.name, field.type === 'array' ? splitList(value) : undefined);
  if (field.name === 'eventTypes') {
    return <EventTypesField field={field} value={value} onInput={onInput} error={message} />;
  }
  const generated = field.kind === 'credentials' && field.generated;
  return (
    <ConnectionField
      field={generated ? { ...field, required: false } : field}
      value={value}
      onInput={onInput}
      error={message}
      secret={field.name === 'headerValue'}
      words={
        generated
          ? generatedWords(field, brand)
          : connectorWords({ connectorKey: view.connector.key, broker: view.connector.broker }, field.name)
      }
    />
  );
}

/** The form of a working link: what it is for, its open fields, a name, and Connect. */
export function ConnectForm({
  code,
  view,
  onDone,
  onUsed,
}: {
  code: string;
  view: ConnectView;
  onDone: (answer: ConnectCompleted, sent: Sent) => void;
  onUsed: () => void;
}) {
  const state = useCompletion(code, view, onDone, onUsed);
  const { complete, fields } = state;
  const brand = view.branding.name ?? view.tenant.name;
  const onFields = namesAnyField(complete.error, ['displayName', ...fields.map((f) => f.name)]);
  return (
    <>
      <h1 id="connect-title" tabIndex={-1} class="focus-target">
        Connect {view.connector.name}
      </h1>
      <p class="page-description">
        {brand} asks you to connect {view.connector.name}.{' '}
        {isOAuthConnector(view.connector.key)
          ? `Connect may take you to ${view.connector.name} to sign in and allow access, and then back here.`
          : 'Fill in the fields below, then press Connect.'}{' '}
        This link works until {formatDate(view.expiresAt)}.
      </p>
      <form class="form" ref={state.form} onSubmit={state.submit}>
        {fields.map((field) => (
          <OpenField
            key={field.name}
            field={field}
            view={view}
            brand={brand}
            value={state.values[field.name] ?? ''}
            onInput={(value) => state.setValue(field.name, value)}
            error={complete.error}
          />
        ))}
        <TextField
          label="Name of the connection (optional)"
          hint={`How ${brand} sees this connection. Left empty, it is called “${view.connector.name}”.`}
          error={fieldErrorText(complete.error, 'displayName')}
          type="text"
          name="displayName"
          autoComplete="off"
          maxLength={200}
          value={state.displayName}
          onValue={state.setDisplayName}
        />
        {complete.error && onFields ? (
          <div class="notice notice-error connect-refusal" role="alert" tabIndex={-1}>
            Nothing was connected. Correct the marked field, then try again.
          </div>
        ) : complete.error ? (
          <div class="connect-refusal" tabIndex={-1}>
            <ErrorNotice error={complete.error} title="Nothing was connected." />
          </div>
        ) : null}
        <div class="form-actions">
          <button
            type="submit"
            class="button button-primary"
            disabled={complete.busy}
            aria-busy={complete.busy}
          >
            {complete.busy ? 'Connecting…' : 'Connect'}
          </button>
        </div>
      </form>
    </>
  );
}
