// Counting the deliveries a filter matches; the event log's words, filters, paths and local times are in
// filters.ts (re-exported here).
import { api } from '../common/api.js';
import { useResource } from '../common/hooks.js';
import { routes, type Delivery, type Page } from '../common/routes.js';
import type { DeliveryCount } from './filters.js';

export * from './filters.js';

/** How many pages of 100 are counted before the answer becomes "more than …". */
const MAX_PAGES = 10;
const PAGE_SIZE = 100;

/** Counts the deliveries of connection `id` that match `query`, a page of 100 at a time, up to 1,000. */
async function countDeliveries(
  id: string,
  query: Record<string, string>,
  signal?: AbortSignal,
): Promise<DeliveryCount> {
  let count = 0;
  let cursor: string | null = null;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const answer: Page<Delivery> = await api(routes.deliveries.log, {
      params: { id },
      query: { ...query, limit: PAGE_SIZE, cursor },
      signal,
    });
    count += answer.data.length;
    cursor = answer.nextCursor;
    if (!cursor) return { count, more: false };
  }
  return { count, more: true };
}

/** The count of deliveries matching `query` (none while `query` is null), again when it changes. */
export function useDeliveryCount(id: string, query: Record<string, string> | null, round = 0) {
  const key = query === null ? '' : `${id}?${new URLSearchParams(query).toString()} #${round}`;
  const resource = useResource<DeliveryCount | null>(
    (signal) => (query === null ? Promise.resolve(null) : countDeliveries(id, query, signal)),
    key,
  );
  // An answer for other filters than those asked now is not shown as theirs.
  return { ...resource, data: resource.loading ? undefined : resource.data };
}
