import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import type { Connection, Connector } from '../api-types.js';
import { useAction } from '../hooks.js';
import {
  type CatalogField,
  ConnectionField,
  fieldErrorText,
  fieldLabel,
  namesAnyField,
} from './ConnectionField.js';
import { Dialog, FormActions } from './Dialog.js';
import { ErrorNotice, Notice } from './Notice.js';
import { SecretOnce } from './SecretOnce.js';

interface BindAnswer {
  connection: Connection;
  credentials: Record<string, string>;
}

/** Fields whose value is sent as typed: secrets are never trimmed. */
const TRIMMED = new Set(['headerName', 'webhookUrl']);

/** A refusal of the binding, in words (a revoked connection answers 409). */
function bindFailure(error: ApiError, name: string): ApiError {
  if (error.code !== 'conflict') return error;
  return new ApiError(
    error.status,
    error.code,
    `“${name}” is revoked, so it cannot take credentials any more. Create a new connection instead.`,
    error.fieldErrors,
    error.requestId,
  );
}

/** A generated field: "generate one for me" (the default, sending nothing) or "use my own". */
function GeneratedChoice({
  field,
  own,
  onOwn,
  value,
  onInput,
  error,
}: {
  field: CatalogField;
  own: boolean;
  onOwn: (own: boolean) => void;
  value: string;
  onInput: (value: string) => void;
  error?: string;
}) {
  const name = useId();
  const label = fieldLabel(field.name);
  return (
    <fieldset class="credentials-choice">
      <legend>{label}</legend>
      <label class="check">
        <input type="radio" name={name} checked={!own} onChange={() => onOwn(false)} />
        <span>Generate a {label.toLowerCase()} for me</span>
      </label>
      <label class="check">
        <input type="radio" name={name} checked={own} onChange={() => onOwn(true)} />
        <span>Use my own</span>
      </label>
      {own ? (
        <ConnectionField field={{ ...field, required: true }} value={value} onInput={onInput} error={error} />
      ) : null}
    </fieldset>
  );
}

/** "24 hours", "30 minutes": how long an overlap lasts. */
function overlapText(seconds: number): string {
  const hours = seconds / 3600;
  if (Number.isInteger(hours)) return hours === 1 ? '1 hour' : `${hours} hours`;
  const minutes = Math.round(seconds / 60);
  return minutes === 1 ? '1 minute' : `${minutes} minutes`;
}

/** What a generated secret is for, said under it. */
function secretUse(name: string, overlapSeconds: number) {
  if (name !== 'signingSecret') return null;
  return (
    <p>
      Give it to the receiver: it checks the <code>webhook-signature</code> header of each delivery with it
      (Standard Webhooks).
      {overlapSeconds > 0
        ? ` The previous secret keeps working for ${overlapText(overlapSeconds)}, so each delivery carries both signatures until then.`
        : ''}
    </p>
  );
}

/**
 * Binds the credentials of a connection's connector (contract §6), as a dialog over the list. A
 * secret hubgate generates is shown here once; closing before copying it asks first.
 */
export function CredentialsDialog({
  connection,
  connector,
  justCreated,
  onBound,
  onClose,
}: {
  connection: Connection;
  connector: Connector | undefined;
  justCreated?: boolean;
  onBound: (connection: Connection, generated: boolean) => void;
  onClose: () => void;
}) {
  const name = connection.displayName;
  const rebind = connection.credentialsBound;
  const fields = connector?.credentialFields ?? [];
  const [values, setValues] = useState<Record<string, string>>({});
  const [own, setOwn] = useState<Record<string, boolean>>({});
  const [secrets, setSecrets] = useState<Record<string, string> | null>(null);
  const [copied, setCopied] = useState<Set<string>>(new Set());
  const [confirming, setConfirming] = useState(false);
  const body = useRef<HTMLDivElement>(null);

  const bind = useAction(async () => {
    const sent: Record<string, string> = {};
    for (const field of fields) {
      if (field.generated && !own[field.name]) continue;
      const value = values[field.name] ?? '';
      sent[field.name] = TRIMMED.has(field.name) ? value.trim() : value;
    }
    try {
      return await api<BindAnswer>('PUT', `/api/v1/integrations/connections/${connection.id}/credentials`, {
        body: sent,
      });
    } catch (error) {
      throw error instanceof ApiError ? bindFailure(error, name) : error;
    }
  });

  async function submit(event: Event) {
    event.preventDefault();
    const answer = await bind.run();
    if (!answer) return;
    const generated = Object.keys(answer.credentials).length > 0;
    onBound(answer.connection, generated);
    if (generated) setSecrets(answer.credentials);
    else onClose();
  }

  // The new secret takes the focus (and is selected, ready to copy); a refusal focuses its field.
  useEffect(() => {
    if (secrets) body.current?.querySelector<HTMLElement>('.secret-value')?.focus();
  }, [secrets]);
  useEffect(() => {
    if (bind.error) body.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [bind.error]);
  // The warning takes the focus on its safe choice; going back puts it on the copy button.
  const warned = useRef(false);
  useEffect(() => {
    if (confirming) body.current?.querySelector<HTMLElement>('.confirm-inline .button-primary')?.focus();
    else if (warned.current) body.current?.querySelector<HTMLElement>('.secret-row .button')?.focus();
    warned.current = confirming;
  }, [confirming]);

  // A browser may close the dialog itself (a second Escape with no click between): keep up with it.
  const close = useRef(onClose);
  close.current = onClose;
  useEffect(() => {
    const dialog = body.current?.closest('dialog');
    let mounted = true;
    const closed = () => {
      if (mounted) close.current();
    };
    dialog?.addEventListener('close', closed);
    return () => {
      mounted = false;
      dialog?.removeEventListener('close', closed);
    };
  }, []);

  const allCopied = secrets !== null && Object.keys(secrets).every((key) => copied.has(key));
  const leave = () => {
    if (secrets && !allCopied) setConfirming(true);
    else onClose();
  };

  if (secrets) {
    return (
      <Dialog title={`${fieldLabel(Object.keys(secrets)[0] ?? 'secret')} of “${name}”`} onClose={leave} wide>
        <div ref={body}>
          <div class="dialog-body stack">
            <Notice tone="success">Credentials bound: “{name}” delivers events from now on.</Notice>
            {Object.entries(secrets).map(([key, secret]) => (
              <div key={key} class="stack-tight credentials-secret">
                <SecretOnce
                  label={fieldLabel(key)}
                  secret={secret}
                  kept="encrypted"
                  onCopied={() => setCopied((current) => new Set(current).add(key))}
                />
                {secretUse(key, rebind ? (connector?.rebindOverlapSeconds ?? 0) : 0)}
              </div>
            ))}
          </div>
          {confirming ? (
            <div class="confirm-inline credentials-confirm" role="alert">
              <p>
                <strong>You won’t see this secret again.</strong> It has not been copied: once this closes,
                the only way to get a secret is to replace it.
              </p>
              <div class="row">
                <button type="button" class="button button-primary" onClick={() => setConfirming(false)}>
                  Back to the secret
                </button>
                <button type="button" class="button button-danger" onClick={onClose}>
                  Close without copying
                </button>
              </div>
            </div>
          ) : (
            <div class="dialog-actions">
              <button type="button" class="button button-primary" onClick={leave}>
                Done
              </button>
            </div>
          )}
        </div>
      </Dialog>
    );
  }

  const title = rebind ? `Replace the credentials of “${name}”` : `Bind credentials to “${name}”`;
  const onFields = namesAnyField(
    bind.error,
    fields.map((f) => f.name),
  );
  return (
    <Dialog title={title} onClose={onClose} wide>
      <div ref={body}>
        {connector ? (
          <form class="form" onSubmit={(event) => void submit(event)}>
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
            {fields.map((field) => {
              const setValue = (value: string) =>
                setValues((current) => ({ ...current, [field.name]: value }));
              const error = fieldErrorText(bind.error, field.name);
              return field.generated ? (
                <GeneratedChoice
                  key={field.name}
                  field={field}
                  own={Boolean(own[field.name])}
                  onOwn={(choice) => setOwn((current) => ({ ...current, [field.name]: choice }))}
                  value={values[field.name] ?? ''}
                  onInput={setValue}
                  error={error}
                />
              ) : (
                <ConnectionField
                  key={field.name}
                  field={field}
                  value={values[field.name] ?? ''}
                  onInput={setValue}
                  error={error}
                  secret={field.name === 'headerValue'}
                />
              );
            })}
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
        ) : (
          <>
            <Notice tone="warning">
              The connector “{connection.connectorKey}” is not in the catalog, so its credential fields are
              not known. Reload the page and try again.
            </Notice>
            <div class="dialog-actions">
              <button type="button" class="button" onClick={onClose}>
                Close
              </button>
            </div>
          </>
        )}
      </div>
    </Dialog>
  );
}
