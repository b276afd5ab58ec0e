/** "You won’t see this secret again": asked before a dialog holding an uncopied secret closes. */
export function CredentialsLeaveWarning({ onBack, onClose }: { onBack: () => void; onClose: () => void }) {
  return (
    <div class="confirm-inline credentials-confirm" role="alert">
      <p>
        <strong>You won’t see this secret again.</strong> It has not been copied: once this closes, the only
        way to get a secret is to replace it.
      </p>
      <div class="row">
        <button type="button" class="button button-primary" onClick={onBack}>
          Back to the secret
        </button>
        <button type="button" class="button button-danger" onClick={onClose}>
          Close without copying
        </button>
      </div>
    </div>
  );
}
