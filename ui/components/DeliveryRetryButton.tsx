/** Retry of a failed delivery, named by its event ID for a screen reader. */
export function DeliveryRetryButton({
  eventId,
  retrying,
  onRetry,
}: {
  eventId: string;
  retrying: boolean;
  onRetry: () => void;
}) {
  return (
    <button
      type="button"
      class="button button-small"
      onClick={onRetry}
      disabled={retrying}
      aria-busy={retrying}
    >
      {retrying ? 'Retrying…' : 'Retry'}
      <span class="visually-hidden"> delivery of {eventId}</span>
    </button>
  );
}
