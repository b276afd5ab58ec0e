// What an administrator does to a source, from the list or its page (docs/api/sources.md): pause or
// resume, rotate its secret (a new one typed or made, the old one verifying for an overlap), delete.
import { useState } from 'preact/hooks';
import { api, type ApiError } from '../common/api.js';
import { ConfirmDialog, Dialog, FormActions } from '../common/Dialog.js';
import { useAction } from '../common/hooks.js';
import { ErrorNotice, type Done } from '../common/Notice.js';
import { routes, type Source, type SourceWithSecretAnswer } from '../common/routes.js';
import { SecretStep, useSecretGuard } from '../common/SecretOnce.js';
import { SecretField } from './NewSourceDialog.js';
import { schemeWords, SECRET_OVERLAPS } from './words.js';

/** A dialog open over a source: rotate its secret, or delete it. */
export type SourceDialog = { kind: 'rotate'; source: Source } | { kind: 'delete'; source: Source } | null;

/** Pause or resume: one PATCH of `status`; `onDone` says what happened, or the refusal. */
export function usePauseToggle(onDone: (source: Source) => void) {
  return useAction(async (source: Source) => {
    const edited = await api(routes.sources.edit, {
      params: { id: source.id },
      body: { status: source.status === 'active' ? 'paused' : 'active' },
    });
    onDone(edited);
  });
}

/** What a pause or a resume did, as the page says it: a pause is a warning, a resume good news. */
export const pausedText = (source: Source): Done =>
  source.status === 'paused'
    ? {
        tone: 'warning',
        text: `“${source.name}” is paused: its ingest URL answers 503 with Retry-After, so a provider tries again later.`,
      }
    : { tone: 'success', text: `“${source.name}” is active again: its ingest URL takes requests.` };

/** The row's or page's buttons: pause or resume, rotate secret, delete. */
export function SourceButtons({
  source,
  busy,
  onToggle,
  onOpen,
}: {
  source: Source;
  busy: boolean;
  onToggle: (source: Source) => void;
  onOpen: (dialog: SourceDialog) => void;
}) {
  const name = <span class="visually-hidden"> {source.name}</span>;
  return (
    <>
      <button
        type="button"
        class="button button-small"
        disabled={busy}
        aria-busy={busy}
        onClick={() => onToggle(source)}
      >
        {source.status === 'active' ? 'Pause' : 'Resume'}
        {name}
      </button>
      <button type="button" class="button button-small" onClick={() => onOpen({ kind: 'rotate', source })}>
        Rotate secret<span class="visually-hidden"> of {source.name}</span>
      </button>
      <button
        type="button"
        class="button button-small button-danger-quiet"
        onClick={() => onOpen({ kind: 'delete', source })}
      >
        Delete{name}
      </button>
    </>
  );
}

/** How long the old secret keeps verifying, in words. */
const afterText = (overlap: number): string =>
  overlap === 0
    ? 'The old secret no longer verifies.'
    : `The old secret keeps verifying for ${overlap === 3600 ? '1 hour' : '24 hours'}.`;

/**
 * The rotate form; a secret hubgate made is kept to show once, else `onFinished` says it is done (the
 * dialog closes: there is nothing more to see).
 */
function useRotate(source: Source, onRotated: () => void, onFinished: (text: string) => void) {
  const [secret, setSecret] = useState('');
  const [overlap, setOverlap] = useState(3600);
  const [checked, setChecked] = useState(false);
  const [rotated, setRotated] = useState<SourceWithSecretAnswer | null>(null);
  const words = schemeWords(source.scheme);
  const problem =
    !secret && !words.generates
      ? words.secretMissing
      : secret && secret.length < 8
        ? 'A secret has at least 8 characters.'
        : undefined;
  const submit = useAction(async () => {
    const answer = await api(routes.sources.rotateSecret, {
      params: { id: source.id },
      body: { ...(secret ? { secret } : {}), previousValidForSeconds: overlap },
    });
    onRotated();
    if (answer.secret) setRotated(answer);
    else onFinished(`“${source.name}” has the new secret. ${afterText(overlap)}`);
  });
  const onSubmit = (event: Event) => {
    event.preventDefault();
    setChecked(true);
    if (problem) return;
    void submit.run();
  };
  const secretError = (checked ? problem : undefined) ?? submit.error?.forField('secret');
  return { secret, setSecret, overlap, setOverlap, rotated, submit, onSubmit, secretError, words };
}

function OverlapChoice({ overlap, onChange }: { overlap: number; onChange: (seconds: number) => void }) {
  return (
    <fieldset>
      <legend>When the old secret stops verifying</legend>
      {SECRET_OVERLAPS.map((option) => (
        <div class="check key-choice" key={option.seconds}>
          <input
            id={`overlap-${option.seconds}`}
            type="radio"
            name="overlap"
            checked={overlap === option.seconds}
            aria-describedby={`overlap-${option.seconds}-help`}
            onChange={() => onChange(option.seconds)}
          />
          <div>
            <label for={`overlap-${option.seconds}`}>{option.label}</label>
            <p class="key-level-help" id={`overlap-${option.seconds}-help`}>
              {option.help}
            </p>
          </div>
        </div>
      ))}
    </fieldset>
  );
}

const ignore = () => undefined;

/** Rotating a source's secret; a secret hubgate made is shown once after. */
function RotateDialog({
  source,
  onClose,
  onRotated,
  onDone,
}: {
  source: Source;
  onClose: () => void;
  onRotated: () => void;
  onDone: (text: string) => void;
}) {
  const rotate = useRotate(source, onRotated, (text) => {
    onClose();
    onDone(text);
  });
  const guard = useSecretGuard(onClose);
  const { rotated, overlap, words } = rotate;
  if (rotated?.secret) {
    return (
      <Dialog
        title={`Save the new secret of “${source.name}”`}
        wide
        onClose={onClose}
        onCancel={guard.confirming ? guard.goBack : guard.requestClose}
      >
        <SecretStep
          secret={rotated.secret}
          guard={guard}
          onClose={onClose}
          label="Signing secret"
          lost={{ what: 'secret', remedy: 'you would have to rotate it again.' }}
          advice="Give it to the sender now: hubgate keeps it encrypted, to verify with, and never shows it again."
        >
          <strong>“{source.name}”</strong> has a new secret, made by hubgate. {afterText(overlap)}
        </SecretStep>
      </Dialog>
    );
  }
  const otherError: ApiError | undefined = rotate.submit.error?.forField('secret')
    ? undefined
    : rotate.submit.error;
  return (
    <Dialog
      title={`Rotate the secret of “${source.name}”`}
      wide
      onClose={onClose}
      onCancel={rotate.submit.busy ? ignore : onClose}
    >
      <form class="form" noValidate onSubmit={rotate.onSubmit}>
        <p class="dialog-lead">
          {words.generates
            ? 'Leave the secret empty and hubgate makes one, shown once; or paste the one the sender gave you.'
            : `Paste the new secret from ${words.label}. While the old one keeps verifying (below), requests signed with either are accepted.`}
        </p>
        <SecretField
          label={words.generates ? 'New signing secret (optional)' : 'New signing secret'}
          value={rotate.secret}
          onValue={rotate.setSecret}
          hint={words.secretHint}
          error={rotate.secretError}
        />
        <OverlapChoice overlap={overlap} onChange={rotate.setOverlap} />
        <ErrorNotice error={otherError} />
        <FormActions
          busy={rotate.submit.busy}
          onCancel={onClose}
          label="Rotate secret"
          busyLabel="Rotating…"
        />
      </form>
    </Dialog>
  );
}

function DeleteDialog({
  source,
  onClose,
  onDeleted,
}: {
  source: Source;
  onClose: () => void;
  onDeleted: () => void;
}) {
  const remove = useAction(async () => {
    await api(routes.sources.remove, { params: { id: source.id } });
    onClose();
    onDeleted();
  });
  return (
    <ConfirmDialog
      title={`Delete “${source.name}”?`}
      confirmLabel="Delete source"
      danger
      busy={remove.busy}
      onConfirm={() => void remove.run()}
      onClose={onClose}
      error={<ErrorNotice error={remove.error} />}
    >
      <p>
        Its ingest URL answers 404 from now on: whatever the provider sends there is lost. Events it already
        published stay in your connections’ event logs.
      </p>
      <p>This cannot be undone: to receive again, create a new source and give the provider its URL.</p>
    </ConfirmDialog>
  );
}

/** The dialog open over the list or the page, if any. */
export function SourceDialogs({
  open,
  onClose,
  onChanged,
  onDeleted,
  onDone,
}: {
  open: SourceDialog;
  onClose: () => void;
  onChanged: () => void;
  onDeleted: (source: Source) => void;
  onDone: (text: string) => void;
}) {
  if (open?.kind === 'rotate') {
    return <RotateDialog source={open.source} onClose={onClose} onRotated={onChanged} onDone={onDone} />;
  }
  if (open?.kind === 'delete') {
    return <DeleteDialog source={open.source} onClose={onClose} onDeleted={() => onDeleted(open.source)} />;
  }
  return null;
}
