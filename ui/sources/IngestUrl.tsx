// A source's ingest URL with a copy button: the address a person pastes into the provider's settings.
// Not a secret (the signature is the proof), so it is shown in full wherever the source is.
import { useEffect, useId, useState } from 'preact/hooks';

/** Copies `text`; says "Copied" for a few seconds, or that the browser refused (select and copy). */
function useCopied(text: string) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(null), 4000);
    return () => clearTimeout(timer);
  }, [copied]);
  const copy = () =>
    navigator.clipboard.writeText(text).then(
      () => setCopied('yes'),
      () => setCopied('failed'),
    );
  return { copied, copy };
}

function CopyStatus({ copied }: { copied: 'yes' | 'failed' | null }) {
  return (
    <span class="visually-hidden" role="status">
      {copied === 'yes' ? 'Copied to the clipboard.' : copied === 'failed' ? 'Select it and copy it.' : ''}
    </span>
  );
}

/** The ingest URL as a labelled read-only field and a Copy button (a dialog, a source's page). */
export function IngestUrlField({ url, hint }: { url: string; hint?: string }) {
  const id = useId();
  const { copied, copy } = useCopied(url);
  return (
    <div class="field">
      <label for={id}>Ingest URL</label>
      <div class="secret-row">
        <input
          id={id}
          class="secret-value"
          type="text"
          readOnly
          value={url}
          spellcheck={false}
          aria-describedby={hint ? `${id}-hint` : undefined}
          onFocus={(event) => event.currentTarget.select()}
        />
        <button type="button" class="button" aria-label="Copy the ingest URL" onClick={() => void copy()}>
          {copied === 'yes' ? 'Copied' : 'Copy'}
        </button>
        <CopyStatus copied={copied} />
      </div>
      {hint ? (
        <p class="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
    </div>
  );
}

const pathOf = (url: string): string => {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
};

/** The ingest URL in a list's row: the address, and a small Copy button that names the source. */
export function IngestUrlCell({ url, name }: { url: string; name: string }) {
  const { copied, copy } = useCopied(url);
  // Every source's URL starts with the same PUBLIC_URL: the row shows what tells them apart, and the
  // button copies the whole address.
  const path = pathOf(url);
  return (
    <span class="source-url">
      <span class="mono break" title={url}>
        {path === url ? url : <span class="visually-hidden">{url.slice(0, url.length - path.length)}</span>}
        {path === url ? null : path}
      </span>
      <button type="button" class="button button-small" onClick={() => void copy()}>
        {copied === 'yes' ? 'Copied' : 'Copy'}
        <span class="visually-hidden"> the ingest URL of {name}</span>
      </button>
      <CopyStatus copied={copied} />
    </span>
  );
}
