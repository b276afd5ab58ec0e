import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { KeySecretWarning } from './KeySecretWarning.js';
import { Notice } from './Notice.js';
import { SecretOnce } from './SecretOnce.js';

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

/**
 * The step of a key dialog that shows its new secret once, with a copy button, how to use it, and
 * the guard against closing it unsaved. The secret lives in the dialog's state only.
 */
export function KeySecretStep({
  secret,
  guard,
  onClose,
  children,
}: {
  secret: string;
  guard: SecretGuard;
  onClose: () => void;
  children: ComponentChildren;
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
      <SecretOnce label="API key secret" secret={secret} onCopied={guard.markCopied} />
      <p class="key-usage">
        Your automation sends it in every request as <code>Authorization: Bearer {secret.slice(0, 4)}…</code>
      </p>
      {guard.confirming ? (
        <KeySecretWarning id={id} goBackRef={goBack} onBack={guard.goBack} onClose={onClose} />
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
