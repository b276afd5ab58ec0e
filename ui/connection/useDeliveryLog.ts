import { useEffect, useState } from 'preact/hooks';
import type { Delivery, DeliveryStatus, Page } from '../api-types.js';
import { api, withQuery } from '../api.js';
import { useDeliveryRetry } from '../components/useDeliveryRetry.js';
import { useResource, type Resource } from '../hooks.js';
import { filterKey, filterQuery, type LogFilters } from './logFilters.js';

/** While a delivery shown is still on its way, the log refreshes itself this often. */
const LIVE_REFRESH_MS = 3000;

/** Deliveries on their way are followed live, while the tab is visible and no retry is assumed. */
function useLiveRefresh(log: Resource<Page<Delivery>>, assumed: number) {
  const inFlight = (log.data?.data ?? []).some((d) =>
    ['pending', 'delivering', 'retrying'].includes(d.status),
  );
  useEffect(() => {
    if (!inFlight || assumed > 0) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') log.reload();
    }, LIVE_REFRESH_MS);
    return () => clearInterval(timer);
  }, [inFlight, assumed, log.reload]);
}

/**
 * One page of a connection's event log (`base` is the connection's API path) with its filters: which
 * rows show their attempts, a refresh asked for by hand, and retries.
 */
export type DeliveryLog = ReturnType<typeof useDeliveryLog>;

export function useDeliveryLog(base: string, id: string, filters: LogFilters, cursor: string | null) {
  // A cursor is valid only with the filters it was made with (contract §15): both come from the URL,
  // which drops the cursor whenever a filter changes.
  const log = useResource(
    (signal) =>
      api<Page<Delivery>>('GET', withQuery(`${base}/events`, { ...filterQuery(filters), cursor }), {
        signal,
      }),
    `log ${id} ${filterKey(filters)} ${cursor ?? ''}`,
  );
  const [expanded, setExpanded] = useState<Set<string>>(new Set());
  const [queued, setQueued] = useState<Map<string, string>>(new Map());
  const [manual, setManual] = useState(false);
  const retry = useDeliveryRetry(
    base,
    (deliveryId) => setQueued((current) => new Map(current).set(deliveryId, 'pending')),
    log.reload,
  );

  // A new answer replaces what a retry assumed ("pending") with what the log says.
  useEffect(() => setQueued(new Map()), [log.data]);
  useEffect(() => {
    if (!log.loading) setManual(false);
  }, [log.loading]);
  useLiveRefresh(log, queued.size);

  const deliveries = (log.data?.data ?? []).map((d) => {
    const assumed = queued.get(d.id);
    return assumed ? { ...d, status: assumed as DeliveryStatus } : d;
  });
  const refresh = () => {
    setManual(true);
    log.reload();
  };
  const toggle = (deliveryId: string) =>
    setExpanded((current) => {
      const next = new Set(current);
      if (!next.delete(deliveryId)) next.add(deliveryId);
      return next;
    });
  return { log, deliveries, expanded, toggle, refreshing: manual && log.loading, refresh, retry };
}
