import type { Delivery, Page } from '../api-types.js';
import { api, withQuery } from '../api.js';
import { useResource } from '../hooks.js';

/** How many pages of 100 are counted before the answer becomes "more than …". */
const MAX_PAGES = 10;
const PAGE_SIZE = 100;

export interface DeliveryCount {
  /** Deliveries counted. */
  count: number;
  /** True when there are more than `count` (the count stopped at its bound). */
  more: boolean;
}

/** Counts the deliveries of the log at `base` that match `query`, a page of 100 at a time, up to 1,000. */
export async function countDeliveries(
  base: string,
  query: Record<string, string>,
  signal?: AbortSignal,
): Promise<DeliveryCount> {
  let count = 0;
  let cursor: string | null = null;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const answer: Page<Delivery> = await api<Page<Delivery>>(
      'GET',
      withQuery(`${base}/events`, { ...query, limit: PAGE_SIZE, cursor }),
      { signal },
    );
    count += answer.data.length;
    cursor = answer.nextCursor;
    if (!cursor) return { count, more: false };
  }
  return { count, more: true };
}

/** "12 deliveries", "more than 1,000 deliveries": a count said honestly. */
export function countText({ count, more }: DeliveryCount, one = 'delivery', many = 'deliveries'): string {
  const n = count.toLocaleString();
  if (more) return `more than ${n} ${many}`;
  return `${n} ${count === 1 ? one : many}`;
}

/** The count of deliveries matching `query` (none while `query` is null), again when it changes. */
export function useDeliveryCount(base: string, query: Record<string, string> | null, round = 0) {
  const key = query === null ? '' : `${base}?${new URLSearchParams(query).toString()} #${round}`;
  const resource = useResource<DeliveryCount | null>(
    (signal) => (query === null ? Promise.resolve(null) : countDeliveries(base, query, signal)),
    key,
  );
  // An answer for other filters than those asked now is not shown as theirs.
  return { ...resource, data: resource.loading ? undefined : resource.data };
}
