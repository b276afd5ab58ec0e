// Binding credentials to a connection (docs/api/connections.md): the connector's credential fields, which
// generated ones the person fills in themselves, then the secrets hubgate generated, shown once,
// with the guard against leaving them uncopied.
import type { RefObject } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../common/api.js';
import { Dialog, FormActions } from '../common/Dialog.js';
import { overlapText } from '../common/format.js';
import { useAction } from '../common/hooks.js';
import { ErrorNotice, Notice } from '../common/Notice.js';
import { routes, type Connection, type Connector } from '../common/routes.js';
import { SecretOnce } from '../common/SecretOnce.js';
import { destinationOf, type Destination } from './destination.js';
import { ConnectionField, fieldErrorText, fieldLabel, namesAnyField, type CatalogField } from './fields.js';

/**
 * Leaving a dialog that shows secrets once: until every one was copied, leaving asks first
 * (`confirming`) instead of closing.
 */
function useSecretLeave(secrets: Record<string, string> | null, onClose: () => void) {
  const [copiedKeys, setCopiedKeys] = useState<Set<string>>(new Set());
  const [confirming, setConfirming] = useState(false);
  const allCopied = secrets !== null && Object.keys(secrets).every((key) => copiedKeys.has(key));
  const leave = () => {
    if (secrets && !allCopied) setConfirming(true);
    else onClose();
  };
  const copied = (key: string) => setCopiedKeys((current) => new Set(current).add(key));
  return { confirming, setConfirming, copied, leave };
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

/**
 * The credential fields this form offers: text fields. An object field (`oauth2ClientCredentials`, the
 * receiver's OAuth2 client, docs/api/oauth.md) has no form here yet; it can be bound through the API.
 */
const formFields = (connector: Connector | undefined): Connector['credentialFields'] =>
  (connector?.credentialFields ?? []).filter((field) => field.type !== 'object');

/**
 * The credentials form of a connection: what is typed, which generated fields the person fills in
 * themselves, and the secrets hubgate generated once they are bound.
 */
function useCredentialsBinding(
  connection: Connection,
  fields: Connector['credentialFields'],
  onBound: (connection: Connection, generated: boolean) => void,
  onClose: () => void,
) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [own, setOwn] = useState<Record<string, boolean>>({});
  const [secrets, setSecrets] = useState<Record<string, string> | null>(null);

  const bind = useAction(async () => {
    const sent: Record<string, string> = {};
    for (const field of fields) {
      if (field.generated && !own[field.name]) continue;
      const value = values[field.name] ?? '';
      // An optional field left empty is left out (a broker's username and password: the broker's default
      // login); sent as "", the API refuses it as empty.
      if (!field.required && value === '') continue;
      sent[field.name] = TRIMMED.has(field.name) ? value.trim() : value;
    }
    try {
      return await api(routes.connections.bind, { params: { id: connection.id }, body: sent });
    } catch (error) {
      throw error instanceof ApiError ? bindFailure(error, connection.displayName) : error;
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
  const setValue = (name: string, value: string) => setValues((current) => ({ ...current, [name]: value }));
  const setOwnOf = (name: string, choice: boolean) => setOwn((current) => ({ ...current, [name]: choice }));
  return { values, setValue, own, setOwn: setOwnOf, secrets, bind, submit };
}

type CredentialsBinding = ReturnType<typeof useCredentialsBinding>;

/**
 * Where the focus goes in the credentials dialog (`body` holds its content): the new secret takes
 * it (and is selected, ready to copy); a refusal focuses its field; the warning takes it on its safe
 * choice, and going back puts it on the copy button.
 */
function useCredentialsFocus(
  body: RefObject<HTMLDivElement | null>,
  secrets: Record<string, string> | null,
  error: ApiError | undefined,
  confirming: boolean,
) {
  useEffect(() => {
    if (secrets) body.current?.querySelector<HTMLElement>('.secret-value')?.focus();
  }, [secrets]);
  useEffect(() => {
    if (error) body.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [error]);
  const warned = useRef(false);
  useEffect(() => {
    if (confirming) body.current?.querySelector<HTMLElement>('.confirm-inline .button-primary')?.focus();
    else if (warned.current) body.current?.querySelector<HTMLElement>('.secret-row .button')?.focus();
    warned.current = confirming;
  }, [confirming]);
}

/**
 * A browser may close the dialog itself (a second Escape with no click between): keep up with it.
 * `inside` is an element of the dialog.
 */
function useDialogClosed(inside: RefObject<HTMLElement | null>, onClose: () => void) {
  const close = useRef(onClose);
  close.current = onClose;
  useEffect(() => {
    const dialog = inside.current?.closest('dialog');
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
}

/** A generated field: "generate one for me" (the default, sending nothing) or "use my own". */
function CredentialsGeneratedChoice({
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

/** The connector's credential fields: a generated one offers "generate" or "use my own". */
function CredentialsFields({ connector, binding }: { connector: Connector; binding: CredentialsBinding }) {
  const { values, own, bind } = binding;
  return (
    <>
      {formFields(connector).map((field) => {
        const setValue = (value: string) => binding.setValue(field.name, value);
        const error = fieldErrorText(bind.error, field.name);
        return field.generated ? (
          <CredentialsGeneratedChoice
            key={field.name}
            field={field}
            own={Boolean(own[field.name])}
            onOwn={(choice) => binding.setOwn(field.name, choice)}
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
            secret={SECRET_FIELDS.has(field.name)}
          />
        );
      })}
    </>
  );
}

/** Credential fields typed as passwords: not shown on screen as they are typed. */
const SECRET_FIELDS = new Set(['headerValue', 'password', 'token']);

/**
 * Who checks the signing secret: the receiver of each request, or the consumer of each message a broker
 * connector (destination.ts) publishes.
 */
const VERIFIER: Record<Destination, { what: string; who: string }> = {
  receiver: { what: 'delivery', who: 'the receiver' },
  broker: { what: 'message', who: 'its consumer' },
};

/** What the credentials are for: a signing secret, what is sent to the receiver or broker, or both. */
function credentialsIntro(connector: Connector): string {
  const names = formFields(connector).map((f) => f.name);
  const signs = names.includes('signingSecret');
  const sent = `hubgate sends ${signs ? 'the others' : 'these'} to ${connector.name} when it connects or delivers; they are stored encrypted and never shown again.`;
  if (!signs) return sent;
  const { what, who } = VERIFIER[destinationOf(connector)];
  const signing = `hubgate signs every ${what} with the signing secret, so ${who} can tell it came from hubgate.`;
  return names.length > 1 ? `${signing} ${sent}` : signing;
}

/** The form that binds (or replaces) a connection's credentials, saying what they are for. */
function CredentialsForm({
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
    formFields(connector).map((f) => f.name),
  );
  return (
    <form class="form" onSubmit={(event) => void binding.submit(event)}>
      {justCreated ? (
        <Notice tone="success">
          “{name}” was created. It delivers nothing until its credentials are bound.
        </Notice>
      ) : null}
      <p class="muted dialog-intro">{credentialsIntro(connector)}</p>
      {rebind ? (
        <Notice tone="warning">
          {connector.rebindOverlapSeconds > 0
            ? `The current credentials keep working for ${overlapText(connector.rebindOverlapSeconds)} next to the new ones, so ${VERIFIER[destinationOf(connector)].who} has time to switch.`
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

/** "You won’t see this secret again": asked before a dialog holding an uncopied secret closes. */
function CredentialsLeaveWarning({ onBack, onClose }: { onBack: () => void; onClose: () => void }) {
  return (
    <div class="confirm-inline credentials-confirm" role="alert">
      <p>
        <strong>You won’t see this secret again.</strong> It has not been copied: once this closes, the only
        way to get a secret is to replace it.
      </p>
      <div class="row">
        <button type="button" class="button button-primary" onClick={onBack}>
          Back to the secret
        </button>
        <button type="button" class="button button-danger" onClick={onClose}>
          Close without copying
        </button>
      </div>
    </div>
  );
}

/**
 * What a generated secret is for, said under it: a receiver checks each request's header; a broker's
 * consumer verifies each message's `webhook-signature` where the catalog says the message carries it
 * (an AMQP header, an MQTT 5 user property…, contract §21).
 */
function secretUse(name: string, overlapSeconds: number, connector: Connector | undefined) {
  if (name !== 'signingSecret') return null;
  const carrier = connector?.broker?.signatureCarrier;
  const what = carrier ? 'message' : 'delivery';
  return (
    <p>
      {carrier ? (
        <>
          hubgate signs each message with it. Give it to the consumer: it verifies the{' '}
          <code>webhook-signature</code> {carrier} of each message with it (Standard Webhooks).
        </>
      ) : (
        <>
          Give it to the receiver: it checks the <code>webhook-signature</code> header of each delivery with
          it (Standard Webhooks).
        </>
      )}
      {overlapSeconds > 0
        ? ` The previous secret keeps working for ${overlapText(overlapSeconds)}, so each ${what} carries both signatures until then.`
        : ''}
    </p>
  );
}

/** The secrets hubgate generated for a binding, each shown once, and how the dialog is left. */
function CredentialsSecrets({
  name,
  connector,
  secrets,
  overlapSeconds,
  confirming,
  onCopied,
  onBack,
  onLeave,
  onClose,
}: {
  name: string;
  /** Its connector in the catalog: what the signing secret signs, and who verifies it. */
  connector: Connector | undefined;
  secrets: Record<string, string>;
  /** How long the previous secret keeps working: 0 for a first binding. */
  overlapSeconds: number;
  confirming: boolean;
  onCopied: (key: string) => void;
  onBack: () => void;
  onLeave: () => void;
  onClose: () => void;
}) {
  return (
    <>
      <div class="dialog-body stack">
        <Notice tone="success">Credentials bound: “{name}” delivers events from now on.</Notice>
        {Object.entries(secrets).map(([key, secret]) => (
          <div key={key} class="stack-tight credentials-secret">
            <SecretOnce
              label={fieldLabel(key)}
              secret={secret}
              kept="encrypted"
              onCopied={() => onCopied(key)}
            />
            {secretUse(key, overlapSeconds, connector)}
          </div>
        ))}
      </div>
      {confirming ? (
        <CredentialsLeaveWarning onBack={onBack} onClose={onClose} />
      ) : (
        <div class="dialog-actions">
          <button type="button" class="button button-primary" onClick={onLeave}>
            Done
          </button>
        </div>
      )}
    </>
  );
}

/** A connector missing from the catalog: its credential fields are not known, so there is no form. */
function CredentialsUnknownConnector({
  connectorKey,
  onClose,
}: {
  connectorKey: string;
  onClose: () => void;
}) {
  return (
    <>
      <Notice tone="warning">
        The connector “{connectorKey}” is not in the catalog, so its credential fields are not known. Reload
        the page and try again.
      </Notice>
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onClose}>
          Close
        </button>
      </div>
    </>
  );
}

/**
 * Binds the credentials of a connection's connector (docs/api/connections.md), as a dialog over the list. A
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
  const binding = useCredentialsBinding(connection, formFields(connector), onBound, onClose);
  const { secrets } = binding;
  const { confirming, setConfirming, copied, leave } = useSecretLeave(secrets, onClose);
  const body = useRef<HTMLDivElement>(null);
  useCredentialsFocus(body, secrets, binding.bind.error, confirming);
  useDialogClosed(body, onClose);

  const title = secrets
    ? `${fieldLabel(Object.keys(secrets)[0] ?? 'secret')} of “${name}”`
    : rebind
      ? `Replace the credentials of “${name}”`
      : `Bind credentials to “${name}”`;
  return (
    <Dialog title={title} onClose={secrets ? leave : onClose} wide>
      <div ref={body}>
        {secrets ? (
          <CredentialsSecrets
            name={name}
            connector={connector}
            secrets={secrets}
            overlapSeconds={rebind ? (connector?.rebindOverlapSeconds ?? 0) : 0}
            confirming={confirming}
            onCopied={copied}
            onBack={() => setConfirming(false)}
            onLeave={leave}
            onClose={onClose}
          />
        ) : connector ? (
          <CredentialsForm
            name={name}
            connector={connector}
            rebind={rebind}
            justCreated={justCreated}
            binding={binding}
            onClose={onClose}
          />
        ) : (
          <CredentialsUnknownConnector connectorKey={connection.connectorKey} onClose={onClose} />
        )}
      </div>
    </Dialog>
  );
}
