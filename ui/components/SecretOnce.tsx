import { useEffect, useId, useRef, useState } from 'preact/hooks';

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
