import type { AppContext } from '../context.js';
import type { InsertedDelivery, ScopedEvent } from './store.js';

// What a publish's write counts in the tenant's usage (docs/api/usage.md), once it committed: each new
// event, and each delivery the insert made `skipped` (its connection paused). The hour is the event's.

export function countPublished(
  ctx: Pick<AppContext, 'usage'>,
  events: readonly ScopedEvent[],
  inserted: readonly InsertedDelivery[],
): void {
  const skipped = new Set(inserted.filter((d) => d.status === 'skipped').map((d) => d.id));
  for (const { scope, event, deliveries } of events) {
    const at = new Date(event.created_at);
    ctx.usage.count(scope.tenantId, 'eventsPublished', 1, at);
    const n = deliveries.filter((d) => skipped.has(d.id)).length;
    ctx.usage.count(scope.tenantId, 'skipped', n, at);
  }
}
