// A secret the API shows once (a key, a signing secret, an invitation link): copy it, and the guard
// that asks "you won't see this again" before it closes uncopied (Unkey's).
import type { ComponentChildren, RefObject } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { Notice } from './Notice.js';

/**
 * Copying a secret shown once: to the clipboard, or selected in `input` where the browser refuses.
 * Until it is copied, leaving the page asks first.
 */
function useSecretCopy(secret: string, onCopied: (() => void) | undefined) {
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);

  // A reload or a closed tab would lose it for good: until it is copied, the browser asks first.
  useEffect(() => {
    if (copied === 'yes') return;
    const ask = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', ask);
    return () => window.removeEventListener('beforeunload', ask);
  }, [copied]);

  async function copy() {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('yes');
      onCopied?.();
    } catch {
      // Clipboard access can be refused (no permission, not a secure context): select it instead.
      input.current?.select();
      setCopied('failed');
    }
  }
  return { input, copied, copy };
}

/**
 * A secret the API shows once (a key, a signing secret): readable, copyable, and said to be gone
 * for good once this closes. It lives in this component's memory only: never in storage, the URL
 * or a log.
 */
export function SecretOnce({
  label,
  secret,
  onCopied,
  kept = 'hash',
  advice,
}: {
  label: string;
  secret: string;
  onCopied?: () => void;
  /** How hubgate keeps it: a hash (keys) or encrypted, to sign with (signing secrets). */
  kept?: 'hash' | 'encrypted';
  /** What to do with it now, instead of "store it in a secret manager" (an invitation link is sent on). */
  advice?: ComponentChildren;
}) {
  const id = useId();
  const { input, copied, copy } = useSecretCopy(secret, onCopied);

  return (
    <div class="secret">
      <label for={id}>{label}</label>
      <div class="secret-row">
        <input
          id={id}
          ref={input}
          class="secret-value"
          type="text"
          readOnly
          value={secret}
          spellcheck={false}
          autoComplete="off"
          onFocus={(event) => event.currentTarget.select()}
        />
        <button type="button" class="button" onClick={copy}>
          {copied === 'yes' ? 'Copied' : 'Copy'}
        </button>
      </div>
      <p class="secret-warning">
        <strong>This is the only time it is shown.</strong>{' '}
        {advice ??
          (kept === 'hash'
            ? 'Store it in a secret manager now: hubgate keeps only a hash and cannot show it again.'
            : 'Store it in a secret manager now: hubgate keeps it encrypted, to sign with, and never shows it again.')}
      </p>
      <p class="visually-hidden" role="status">
        {copied === 'yes'
          ? 'Copied to the clipboard.'
          : copied === 'failed'
            ? 'Selected: press Ctrl+C to copy.'
            : ''}
      </p>
    </div>
  );
}

/** What is lost when a secret shown once closes uncopied, and how to get another. */
export interface LostWords {
  /** "secret", "link". */
  what: string;
  /** "you would have to rotate the key for a new one." */
  remedy: string;
}

/** "You won’t see this secret again": asked before a dialog closes with its secret uncopied. */
export function SecretWarning({
  id,
  lost,
  goBackRef,
  onBack,
  onClose,
}: {
  id: string;
  lost: LostWords;
  goBackRef: RefObject<HTMLButtonElement | null>;
  onBack: () => void;
  onClose: () => void;
}) {
  return (
    <div
      class="confirm-inline"
      role="alertdialog"
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-detail`}
    >
      <p id={`${id}-title`}>
        <strong>You won’t see this {lost.what} again.</strong>
      </p>
      <p id={`${id}-detail`}>
        You have not copied it. Once this closes, hubgate cannot show it again: {lost.remedy}
      </p>
      <div class="row">
        <button type="button" class="button" ref={goBackRef} onClick={onBack}>
          Go back
        </button>
        <button type="button" class="button button-danger" onClick={onClose}>
          Close anyway
        </button>
      </div>
    </div>
  );
}

export interface SecretGuard {
  confirming: boolean;
  markCopied(): void;
  /** "Done" or Escape: closes if the secret was copied, else asks first. */
  requestClose(): void;
  goBack(): void;
}

/**
 * Unkey's guard for a secret shown once: closing before it was copied asks "you won't see it again"
 * first. Escape while asking goes back to the secret.
 */
export function useSecretGuard(onClose: () => void): SecretGuard {
  const [copied, setCopied] = useState(false);
  const [confirming, setConfirming] = useState(false);
  return {
    confirming,
    markCopied: () => setCopied(true),
    requestClose: () => (copied ? onClose() : setConfirming(true)),
    goBack: () => setConfirming(false),
  };
}

const KEY_LOST: LostWords = { what: 'secret', remedy: 'you would have to rotate the key for a new one.' };

/**
 * The step of a dialog that shows a new secret once (a key's, an invitation link), with a copy
 * button, how to use it, and the guard against closing it unsaved. The secret lives in the
 * dialog's state only. `children` says what was done.
 */
export function SecretStep({
  secret,
  guard,
  onClose,
  children,
  label = 'API key secret',
  usage,
  advice,
  lost = KEY_LOST,
}: {
  secret: string;
  guard: SecretGuard;
  onClose: () => void;
  children: ComponentChildren;
  label?: string;
  /** How it is used, under it. */
  usage?: ComponentChildren;
  advice?: ComponentChildren;
  lost?: LostWords;
}) {
  const root = useRef<HTMLDivElement>(null);
  const goBack = useRef<HTMLButtonElement>(null);
  const id = useId();

  // The form that was here is gone: focus moves to the copy button, and to "Go back" when asking.
  useEffect(() => {
    if (guard.confirming) goBack.current?.focus();
    else root.current?.querySelector<HTMLButtonElement>('.secret-row button')?.focus();
  }, [guard.confirming]);

  return (
    // A copy by keyboard (Ctrl+C in the selected field) counts as copied too.
    <div class="stack key-secret" ref={root} onCopy={guard.markCopied}>
      <Notice tone="success">{children}</Notice>
      <SecretOnce label={label} secret={secret} onCopied={guard.markCopied} advice={advice} />
      {usage}
      {guard.confirming ? (
        <SecretWarning id={id} lost={lost} goBackRef={goBack} onBack={guard.goBack} onClose={onClose} />
      ) : (
        <div class="dialog-actions">
          <button type="button" class="button button-primary" onClick={guard.requestClose}>
            Done
          </button>
        </div>
      )}
    </div>
  );
}
