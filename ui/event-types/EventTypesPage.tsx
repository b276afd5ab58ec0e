// The event-type catalog (docs/api/events.md): every type by name with its schema formatted; admins
// add a type, edit its description and schema, deprecate it and delete it.
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api, ApiError, withQuery } from '../common/api.js';
import { ConfirmDialog, Dialog, FormActions } from '../common/Dialog.js';
import { Field, TextField } from '../common/Field.js';
import { Time } from '../common/format.js';
import { useAction, useResource } from '../common/hooks.js';
import { PageHeader } from '../common/Layout.js';
import {
  DoneNotice,
  EmptyState,
  ErrorNotice,
  Loading,
  StatusBadge,
  useDoneNotice,
} from '../common/Notice.js';
import { Pager } from '../common/Pager.js';
import { routes, type EventType } from '../common/routes.js';
import { canManageKeys, session } from '../common/session.js';

type Open = { kind: 'add' } | { kind: 'edit'; type: EventType } | { kind: 'delete'; type: EventType } | null;

/** The schema as typed, or what is wrong with it in words; empty text is no schema. */
function parseSchema(text: string): { schema: Record<string, unknown> | null } | { error: string } {
  if (text.trim() === '') return { schema: null };
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return { error: 'A schema is a JSON object, such as {"type": "object"}.' };
    return { schema: value as Record<string, unknown> };
  } catch {
    return { error: 'This is not JSON: check the quotes, commas and brackets.' };
  }
}

/** Add a type, or edit one: name (fixed once made), description, schema as JSON, deprecated. */
function TypeDialog({
  type,
  onSaved,
  onClose,
}: {
  type?: EventType;
  onSaved: (saved: EventType) => void;
  onClose: () => void;
}) {
  const [name, setName] = useState(type?.name ?? '');
  const [description, setDescription] = useState(type?.description ?? '');
  const [schemaText, setSchemaText] = useState(type?.schema ? JSON.stringify(type.schema, null, 2) : '');
  const [deprecated, setDeprecated] = useState(type?.deprecated ?? false);
  const [schemaError, setSchemaError] = useState<string | undefined>();
  const save = useAction(async () => {
    const parsed = parseSchema(schemaText);
    if ('error' in parsed) return setSchemaError(parsed.error);
    setSchemaError(undefined);
    const fields = { schema: parsed.schema, deprecated };
    try {
      const saved = type
        ? await api(routes.eventTypes.edit, {
            params: { name: type.name },
            body: { ...fields, description: description || null },
          })
        : await api(routes.eventTypes.create, {
            body: { name, ...fields, ...(description ? { description } : {}) },
          });
      onSaved(saved);
    } catch (error) {
      // The server names what it refused in the schema (`schema.properties.a.pattern`): said by the field.
      const field =
        error instanceof ApiError ? error.fieldErrors.find((e) => e.path.startsWith('schema')) : undefined;
      if (!field) throw error;
      setSchemaError(
        field.path === 'schema' ? field.message : `${field.path.slice('schema.'.length)}: ${field.message}`,
      );
    }
  });
  return (
    <Dialog title={type ? `Edit ${type.name}` : 'Add an event type'} onClose={onClose} wide>
      <form
        class="form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void save.run();
        }}
      >
        {type ? null : (
          <TextField
            label="Name"
            type="text"
            hint="What events are published with: a–z, 0–9, _ . - (e.g. order.paid). It cannot change later."
            value={name}
            onValue={setName}
            required
            maxLength={100}
          />
        )}
        <TextField
          label="Description"
          type="text"
          value={description}
          onValue={setDescription}
          maxLength={1000}
        />
        <Field
          label="Schema (JSON Schema 2020-12)"
          hint="Events of this type must have data that matches it. Leave empty for none."
          error={schemaError}
        >
          {({ id, describedBy, invalid }) => (
            <textarea
              id={id}
              class="code-input"
              rows={12}
              spellcheck={false}
              aria-describedby={describedBy}
              aria-invalid={invalid}
              value={schemaText}
              onInput={(event) => setSchemaText(event.currentTarget.value)}
            />
          )}
        </Field>
        <label class="checkbox">
          <input
            type="checkbox"
            checked={deprecated}
            onChange={(event) => setDeprecated(event.currentTarget.checked)}
          />{' '}
          Deprecated: still accepted, with a warning in the publish answer
        </label>
        <ErrorNotice error={save.error} title="The event type was not saved." />
        <FormActions busy={save.busy} onCancel={onClose} label="Save" busyLabel="Saving…" />
      </form>
    </Dialog>
  );
}

function DeleteDialog({
  type,
  onDeleted,
  onClose,
}: {
  type: EventType;
  onDeleted: () => void;
  onClose: () => void;
}) {
  const remove = useAction(async () => {
    try {
      await api(routes.eventTypes.remove, { params: { name: type.name } });
    } catch (error) {
      // Deleted meanwhile: what was wanted is done.
      if (!(error instanceof ApiError) || error.status !== 404) throw error;
    }
    onDeleted();
  });
  return (
    <ConfirmDialog
      title={`Delete ${type.name}?`}
      confirmLabel="Delete event type"
      danger
      busy={remove.busy}
      onConfirm={() => void remove.run()}
      onClose={onClose}
      error={<ErrorNotice error={remove.error} />}
    >
      <p>Events of this type are still accepted afterwards, without any check of their data.</p>
    </ConfirmDialog>
  );
}

function TypeRow({ type, admin, onOpen }: { type: EventType; admin: boolean; onOpen: (open: Open) => void }) {
  return (
    <tr>
      <th scope="row">
        <code>{type.name}</code>
        {type.deprecated ? <StatusBadge status="deprecated" label="Deprecated" /> : null}
        {type.description ? <p class="muted">{type.description}</p> : null}
      </th>
      <td data-label="Schema">
        {type.schema ? (
          <pre class="schema" aria-label={`Schema of ${type.name}`}>
            {JSON.stringify(type.schema, null, 2)}
          </pre>
        ) : (
          <span class="muted">None: any data</span>
        )}
      </td>
      <td data-label="Updated">
        <Time at={type.updatedAt} />
      </td>
      <td class="actions">
        {admin ? (
          <>
            <button type="button" class="button button-small" onClick={() => onOpen({ kind: 'edit', type })}>
              Edit<span class="visually-hidden"> {type.name}</span>
            </button>
            <button
              type="button"
              class="button button-small button-danger-quiet"
              onClick={() => onOpen({ kind: 'delete', type })}
            >
              Delete<span class="visually-hidden"> {type.name}</span>
            </button>
          </>
        ) : null}
      </td>
    </tr>
  );
}

/** The catalog, by name: anyone signed in reads it; admins change it. */
export function EventTypesPage() {
  const { query } = useLocation();
  const cursor = query.cursor || null;
  const admin = canManageKeys(session.value);
  const [open, setOpen] = useState<Open>(null);
  const { done, setDone, ref: doneNotice, dismiss } = useDoneNotice(cursor ?? '');
  const types = useResource(
    (signal) => api(routes.eventTypes.list, { query: { cursor }, signal }),
    cursor ?? '',
  );
  const finish = (text: string) => {
    setOpen(null);
    types.reload();
    setDone(text);
  };
  const addButton = (
    <button
      type="button"
      class="button button-primary"
      onClick={() => (setDone(null), setOpen({ kind: 'add' }))}
    >
      Add an event type
    </button>
  );
  return (
    <>
      <PageHeader
        title="Event types"
        description="The types your systems publish, each with an optional schema its events' data must match."
        actions={admin ? addButton : undefined}
      />
      <DoneNotice done={done} noticeRef={doneNotice} onDismiss={dismiss} />
      {types.error ? (
        <ErrorNotice error={types.error} title="The event types could not be loaded." />
      ) : !types.data ? (
        <Loading what="Loading the event types" />
      ) : types.data.data.length === 0 ? (
        <EmptyState title="No event types yet">
          <p>Events of any type are accepted. Add a type to describe it and check its events' data.</p>
        </EmptyState>
      ) : (
        <>
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Event types">
            <table class="cards-on-phone">
              <caption class="visually-hidden">Event types, by name</caption>
              <thead>
                <tr>
                  <th scope="col">Event type</th>
                  <th scope="col">Schema</th>
                  <th scope="col">Updated</th>
                  <th scope="col" class="actions">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {types.data.data.map((type) => (
                  <TypeRow
                    key={type.name}
                    type={type}
                    admin={admin}
                    onOpen={(next) => (setDone(null), setOpen(next))}
                  />
                ))}
              </tbody>
            </table>
          </div>
          <Pager
            cursor={cursor}
            nextCursor={types.data.nextCursor}
            hrefFor={(next) => withQuery('/event-types', { cursor: next })}
            label="Pages of event types"
          />
        </>
      )}
      {open?.kind === 'add' ? (
        <TypeDialog onClose={() => setOpen(null)} onSaved={(saved) => finish(`${saved.name} was added.`)} />
      ) : open?.kind === 'edit' ? (
        <TypeDialog
          type={open.type}
          onClose={() => setOpen(null)}
          onSaved={(saved) => finish(`${saved.name} was saved.`)}
        />
      ) : open?.kind === 'delete' ? (
        <DeleteDialog
          type={open.type}
          onClose={() => setOpen(null)}
          onDeleted={() => finish(`${open.type.name} was deleted.`)}
        />
      ) : null}
    </>
  );
}
