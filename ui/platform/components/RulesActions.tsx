/** Whether there are unsaved changes, and Discard and Save. */
export function RulesActions({
  dirty,
  busy,
  revision,
  blocked,
  onDiscard,
}: {
  dirty: boolean;
  busy: boolean;
  revision: number;
  /** A conflict waits for a choice: saving is off meanwhile. */
  blocked: boolean;
  onDiscard: () => void;
}) {
  return (
    <div class="rules-actions">
      <p class="muted" role="status">
        {dirty ? 'You have unsaved changes.' : `No unsaved changes (revision ${revision}).`}
      </p>
      <div class="row">
        <button type="button" class="button" disabled={!dirty || busy} onClick={onDiscard}>
          Discard changes
        </button>
        <button type="submit" class="button button-primary" disabled={busy || blocked} aria-busy={busy}>
          {busy ? 'Saving…' : 'Save rules'}
        </button>
      </div>
    </div>
  );
}
