import { sql, type Kysely } from 'kysely';

// Monitoring history (docs/operators/monitoring.md): one row per minute with the deliveries that ended in it, their
// latency percentiles and the queue depth sampled in it, so a day of history is 1,440 small rows
// whatever the traffic. Kept as long as deliveries are.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('monitoring_minutes')
    .addColumn('minute', 'timestamptz', (c) => c.primaryKey())
    .addColumn('delivered', 'integer')
    .addColumn('failed', 'integer')
    .addColumn('latency_p50_ms', 'float8')
    .addColumn('latency_p95_ms', 'float8')
    .addColumn('latency_p99_ms', 'float8')
    .addColumn('queue_depth', 'integer')
    .execute();
  // Minutes before this one are rolled up in monitoring_minutes; later ones are read live.
  await db.schema
    .createTable('monitoring_rollup')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('rolled_up_to', 'timestamptz', (c) => c.notNull())
    .execute();
  // Deliveries by the moment they ended, for the rollup and the monitoring window.
  await db.schema
    .createIndex('deliveries_delivered_at_idx')
    .on('deliveries')
    .column('delivered_at')
    .where(sql.ref('status'), '=', 'delivered')
    .execute();
  await db.schema
    .createIndex('deliveries_failed_at_idx')
    .on('deliveries')
    .column('updated_at')
    .where(sql.ref('status'), '=', 'failed')
    .execute();
}
