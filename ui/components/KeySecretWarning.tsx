import type { RefObject } from 'preact';

/** "You won’t see this secret again": asked before a key dialog closes with its secret uncopied. */
export function KeySecretWarning({
  id,
  goBackRef,
  onBack,
  onClose,
}: {
  id: string;
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
        <strong>You won’t see this secret again.</strong>
      </p>
      <p id={`${id}-detail`}>
        You have not copied it. Once this closes, hubgate cannot show it again: you would have to rotate the
        key for a new one.
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
