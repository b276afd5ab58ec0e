import type { Overview } from '../api-types.js';

/** How many deliveries were made, failed, and still wait, in the last 24 hours. */
export function OverviewDeliveries({ overview }: { overview: Overview }) {
  const { delivered, failed, pending } = overview.deliveries24h;
  return (
    <section class="card" aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries in the last 24 hours</h2>
      <dl class="stats">
        <div class="stat">
          <dt>Delivered</dt>
          <dd>{delivered.toLocaleString()}</dd>
        </div>
        <div class={failed > 0 ? 'stat stat-bad' : 'stat'}>
          <dt>Failed</dt>
          <dd>{failed.toLocaleString()}</dd>
        </div>
        <div class="stat">
          <dt>Pending or retrying</dt>
          <dd>{pending.toLocaleString()}</dd>
        </div>
      </dl>
    </section>
  );
}
