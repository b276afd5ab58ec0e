/** "You won’t see this secret again": asked before a new channel's uncopied signing secret goes. */
export function ChannelSecretWarning({ onBack, onClose }: { onBack: () => void; onClose: () => void }) {
  return (
    <div class="confirm-inline" role="alertdialog" aria-label="You won’t see this secret again">
      <p>
        <strong>You won’t see this secret again.</strong> You have not copied it; once this closes, the
        receiver cannot check signatures unless you create the channel again.
      </p>
      <div class="row">
        <button type="button" class="button" onClick={onBack}>
          Go back
        </button>
        <button type="button" class="button button-danger" onClick={onClose}>
          Close without copying
        </button>
      </div>
    </div>
  );
}
