// Creating a source (docs/api/sources.md): the provider's scheme first, then the name, the secret (with
// where that provider shows it) and the scheme's own fields; then the ingest URL to paste at the
// provider and, when hubgate made the secret, the secret, shown once.
import { useState } from 'preact/hooks';
import { api } from '../common/api.js';
import { Dialog, FormActions } from '../common/Dialog.js';
import { Field, TextField } from '../common/Field.js';
import { useAction, useFocusFirstInvalid } from '../common/hooks.js';
import { ErrorNotice, Notice } from '../common/Notice.js';
import { routes, type CreateSourceBody, type SourceWithSecretAnswer } from '../common/routes.js';
import { SecretStep, useSecretGuard, type LostWords } from '../common/SecretOnce.js';
import { IngestUrlField } from './IngestUrl.js';
import { SCHEMES, schemeWords, sourcePage } from './words.js';

const NAME_MAX = 100;
const SECRET_MIN = 8;

/** The hmac scheme's fields, as typed (empty = left out). */
interface HmacValues {
  signatureHeader: string;
  encoding: 'hex' | 'base64';
  signaturePrefix: string;
  typePath: string;
  eventType: string;
  idPath: string;
  idHeader: string;
}

const NO_HMAC: HmacValues = {
  signatureHeader: '',
  encoding: 'hex',
  signaturePrefix: '',
  typePath: '',
  eventType: '',
  idPath: '',
  idHeader: '',
};

/** What the form sends: the typed values, empty optional ones left out, hmac's only for hmac. */
function bodyOf(scheme: string, name: string, secret: string, hmac: HmacValues): CreateSourceBody {
  const body: CreateSourceBody = { name: name.trim(), scheme };
  if (secret) body.secret = secret;
  if (scheme !== 'hmac') return body;
  const { encoding, ...texts } = hmac;
  const typed = Object.entries(texts).filter(([, value]) => value.trim() !== '');
  return { ...body, encoding, ...Object.fromEntries(typed.map(([key, value]) => [key, value.trim()])) };
}

function useNewSource(onCreated: () => void) {
  const [scheme, setScheme] = useState('github');
  const [name, setName] = useState('');
  const [secret, setSecret] = useState('');
  const [hmac, setHmac] = useState<HmacValues>(NO_HMAC);
  const [checked, setChecked] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const [created, setCreated] = useState<SourceWithSecretAnswer | null>(null);
  const form = useFocusFirstInvalid(attempt);
  const words = schemeWords(scheme);

  const problems = {
    name: !name.trim() ? 'Enter a name.' : undefined,
    secret:
      !secret && !words.generates
        ? words.secretMissing
        : secret && secret.length < SECRET_MIN
          ? `A secret has at least ${SECRET_MIN} characters.`
          : undefined,
    signatureHeader:
      scheme === 'hmac' && !hmac.signatureHeader.trim() ? 'Enter the header’s name.' : undefined,
  };
  const submit = useAction(async () => {
    setCreated(await api(routes.sources.create, { body: bodyOf(scheme, name, secret, hmac) }));
    onCreated();
  });
  const onSubmit = (event: Event) => {
    event.preventDefault();
    setChecked(true);
    setAttempt((n) => n + 1);
    if (Object.values(problems).some(Boolean)) return;
    void submit.run();
  };
  /** A problem found before sending (once submitted), else the API's word on that field. */
  const errorOf = (field: string): string | undefined =>
    (checked ? problems[field as keyof typeof problems] : undefined) ?? submit.error?.forField(field);
  return {
    ...{ scheme, setScheme, name, setName, secret, setSecret, hmac, setHmac },
    ...{ created, form, submit, onSubmit, errorOf, words },
  };
}

type NewSource = ReturnType<typeof useNewSource>;

/** The provider's scheme: one choice, each said with what sends with it. */
function SchemeChoice({ value, onChange }: { value: string; onChange: (scheme: string) => void }) {
  return (
    <fieldset class="source-schemes">
      <legend>Provider</legend>
      {SCHEMES.map((scheme) => (
        <div class="check key-choice" key={scheme.name}>
          <input
            id={`scheme-${scheme.name}`}
            type="radio"
            name="scheme"
            value={scheme.name}
            checked={value === scheme.name}
            aria-describedby={`scheme-${scheme.name}-help`}
            onChange={() => onChange(scheme.name)}
          />
          <div>
            <label for={`scheme-${scheme.name}`}>{scheme.label}</label>
            <p class="key-level-help" id={`scheme-${scheme.name}-help`}>
              {scheme.description}
            </p>
          </div>
        </div>
      ))}
    </fieldset>
  );
}

/** The secret: required, or optional for a scheme whose secret hubgate can make. */
export function SecretField({
  label,
  value,
  onValue,
  hint,
  error,
}: {
  label: string;
  value: string;
  onValue: (value: string) => void;
  hint: string;
  error: string | undefined;
}) {
  return (
    <Field label={label} hint={hint} error={error}>
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          type="password"
          class="mono"
          autoComplete="new-password"
          spellcheck={false}
          maxLength={500}
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          onInput={(event) => onValue(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/** The hmac scheme's own fields: where the signature is and how it is written, where the type and ID are. */
function HmacFields({ create }: { create: NewSource }) {
  const { hmac, setHmac, errorOf } = create;
  const text = (key: Exclude<keyof HmacValues, 'encoding'>, label: string, hint: string) => (
    <TextField
      label={label}
      hint={hint}
      error={errorOf(key)}
      type="text"
      autoComplete="off"
      maxLength={100}
      value={hmac[key]}
      onValue={(value) => setHmac({ ...hmac, [key]: value })}
    />
  );
  return (
    <fieldset class="stack">
      <legend>How the sender signs</legend>
      {text('signatureHeader', 'Signature header', 'The header holding the signature, e.g. X-Signature.')}
      <Field label="Digest encoding">
        {({ id }) => (
          <select
            id={id}
            value={hmac.encoding}
            onChange={(event) =>
              setHmac({ ...hmac, encoding: event.currentTarget.value as 'hex' | 'base64' })
            }
          >
            <option value="hex">Hexadecimal</option>
            <option value="base64">Base64</option>
          </select>
        )}
      </Field>
      {text('signaturePrefix', 'Signature prefix (optional)', 'Text before the digest, e.g. sha256=')}
      {text('typePath', 'Event type field (optional)', 'The body field of the event type, dotted: data.type')}
      {text('eventType', 'Fixed event type (optional)', 'The event type when the body names none.')}
      {text('idPath', 'Delivery ID field (optional)', 'The body field of the delivery ID, dotted: id')}
      {text('idHeader', 'Delivery ID header (optional)', 'Or the header of the delivery ID.')}
    </fieldset>
  );
}

function NewSourceForm({ create, onClose }: { create: NewSource; onClose: () => void }) {
  const { words, submit } = create;
  const otherError = submit.error && submit.error.fieldErrors.length === 0 ? submit.error : undefined;
  return (
    <form class="form" ref={create.form} noValidate onSubmit={create.onSubmit}>
      <SchemeChoice value={create.scheme} onChange={create.setScheme} />
      <TextField
        label="Name"
        hint={`What sends to it, e.g. “GitHub: acme/shop”. At most ${NAME_MAX} characters.`}
        error={create.errorOf('name')}
        type="text"
        autoComplete="off"
        maxLength={NAME_MAX}
        required
        value={create.name}
        onValue={create.setName}
      />
      <SecretField
        label={words.generates ? 'Signing secret (optional)' : 'Signing secret'}
        value={create.secret}
        onValue={create.setSecret}
        hint={words.secretHint}
        error={create.errorOf('secret')}
      />
      {create.scheme === 'hmac' ? <HmacFields create={create} /> : null}
      <ErrorNotice error={otherError} />
      <FormActions busy={submit.busy} onCancel={onClose} label="Create source" busyLabel="Creating…" />
    </form>
  );
}

const LOST: LostWords = {
  what: 'secret',
  remedy: 'you would have to rotate the source’s secret for a new one.',
};

/** After create: where the provider sends, and the secret hubgate made, shown once. */
function CreatedStep({ created, onClose }: { created: SourceWithSecretAnswer; onClose: () => void }) {
  const guard = useSecretGuard(onClose);
  const label = schemeWords(created.scheme).label;
  const url = (
    <IngestUrlField
      url={created.ingestUrl}
      hint={`Paste it where ${label} asks for the webhook’s URL (payload URL, endpoint URL).`}
    />
  );
  const log = (
    <a href={sourcePage(created.id)}>
      Open the request log of “<bdi>{created.name}</bdi>”
    </a>
  );
  if (created.secret) {
    return (
      <Dialog
        title="Save the source’s secret"
        wide
        onClose={onClose}
        onCancel={guard.confirming ? guard.goBack : guard.requestClose}
      >
        <SecretStep
          secret={created.secret}
          guard={guard}
          onClose={onClose}
          label="Signing secret"
          lost={LOST}
          advice="Give it to the sender now: hubgate keeps it encrypted, to verify with, and never shows it again."
          usage={
            <>
              {url}
              <p>{log}</p>
            </>
          }
        >
          <strong>“{created.name}”</strong> was created. hubgate made its signing secret.
        </SecretStep>
      </Dialog>
    );
  }
  return (
    <Dialog title="Source created" wide onClose={onClose}>
      <div class="stack">
        <Notice tone="success">
          <strong>“{created.name}”</strong> was created. It verifies {label}’s requests with the secret you
          gave.
        </Notice>
        {url}
        <p>{log}</p>
        <div class="dialog-actions">
          <button type="button" class="button button-primary" onClick={onClose}>
            Done
          </button>
        </div>
      </div>
    </Dialog>
  );
}

const ignore = () => undefined;

/** "New source": the form, then what the provider needs. `onCreated` lets the list show it meanwhile. */
export function NewSourceDialog({ onClose, onCreated }: { onClose: () => void; onCreated: () => void }) {
  const create = useNewSource(onCreated);
  if (create.created) return <CreatedStep created={create.created} onClose={onClose} />;
  return (
    // Escape while it is being made would lose a generated secret: it waits for the answer.
    <Dialog title="New source" wide onClose={onClose} onCancel={create.submit.busy ? ignore : onClose}>
      <p class="dialog-lead">
        A source receives a provider’s webhooks at an ingest URL of its own, checks each one’s signature and
        publishes it as an event to your connections.
      </p>
      <NewSourceForm create={create} onClose={onClose} />
    </Dialog>
  );
}
