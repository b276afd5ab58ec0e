import { useEffect, useRef, useState } from 'preact/hooks';
import type { Delivery } from '../api-types.js';
import { api, ApiError } from '../api.js';
import { useAction } from '../hooks.js';

/** A retry refused (409), in words: a revoked connection, or a delivery that is no longer failed. */
function retryFailure(error: ApiError): ApiError {
  if (error.code !== 'conflict' || !/disabled/.test(error.message)) return error;
  return new ApiError(
    error.status,
    error.code,
    'The connection is revoked, so nothing is sent to it any more.',
    error.fieldErrors,
    error.requestId,
  );
}

/**
 * Retrying a failed delivery of the log at `base`: the row is assumed "pending" (`onQueued`) until
 * the log is loaded again (`reload`), and a notice naming the event says it is queued.
 */
export function useDeliveryRetry(base: string, onQueued: (deliveryId: string) => void, reload: () => void) {
  const [retried, setRetried] = useState<string | null>(null);
  // The retried row may leave the list (filtered by "failed"): the notice takes the focus instead.
  const notice = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (retried) notice.current?.focus();
  }, [retried]);

  const action = useAction(async (delivery: Delivery) => {
    setRetried(null);
    try {
      await api('POST', `${base}/events/${encodeURIComponent(delivery.id)}/retry`);
    } catch (error) {
      throw error instanceof ApiError ? retryFailure(error) : error;
    }
    onQueued(delivery.id);
    setRetried(delivery.eventId);
    reload();
  });
  return { action, retried, notice };
}
