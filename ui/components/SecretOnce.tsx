import { useId } from 'preact/hooks';
import { useSecretCopy } from './useSecretCopy.js';

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
}: {
  label: string;
  secret: string;
  onCopied?: () => void;
  /** How hubgate keeps it: a hash (keys) or encrypted, to sign with (signing secrets). */
  kept?: 'hash' | 'encrypted';
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
        <strong>This is the only time it is shown.</strong> Store it in a secret manager now:{' '}
        {kept === 'hash'
          ? 'hubgate keeps only a hash and cannot show it again.'
          : 'hubgate keeps it encrypted, to sign with, and never shows it again.'}
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
