import { useId } from 'preact/hooks';
import { useCopy } from './useCopy.js';

/** The body as delivered, formatted, with a copy button (the copy is the formatted JSON). */
export function PayloadView({ payload, eventId }: { payload: Record<string, unknown>; eventId: string }) {
  const text = JSON.stringify(payload, null, 2);
  const { target, copied, copy } = useCopy<HTMLPreElement>(text);
  const id = useId();
  return (
    <section class="card detail-section" aria-labelledby={id}>
      <div class="card-head">
        <h2 id={id}>Payload</h2>
        <div class="row">
          <span class={copied === 'select' ? 'copy-status' : 'visually-hidden'} role="status">
            {copied === 'yes'
              ? 'Copied to the clipboard'
              : copied === 'select'
                ? 'Selected: press Ctrl+C to copy'
                : ''}
          </span>
          <button type="button" class="button button-small" onClick={() => void copy()}>
            {copied === 'yes' ? 'Copied' : 'Copy payload'}
          </button>
        </div>
      </div>
      <p class="muted detail-lead">
        The body exactly as it was (or will be) delivered for <span class="mono">{eventId}</span>.
      </p>
      {/* Scrolls on its own when wide: a named region that takes the focus, so a keyboard scrolls it too. */}
      <pre ref={target} class="code-block" tabIndex={0} role="region" aria-label="Payload JSON">
        <code>{text}</code>
      </pre>
    </section>
  );
}
