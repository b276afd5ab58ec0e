import { sql, type Kysely } from 'kysely';

// Events, their deliveries and every attempt (issue: delivery engine).
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const step of steps) await step(db);
}

/** The statements, in order: one table or index each. */
const steps: Array<(db: Kysely<unknown>) => Promise<unknown>> = [
  (db) =>
    db.schema
      .createTable('events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('type', 'text', (c) => c.notNull())
      // The event data, AES-256-GCM under the event-payload key, bound to the event ID.
      .addColumn('payload_sealed', 'text', (c) => c.notNull())
      .addColumn('idempotency_key', 'text')
      .addColumn('request_hash', 'text')
      .addColumn('delivery_count', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .execute(),
  (db) =>
    db.schema
      .createIndex('events_idempotency_idx')
      .on('events')
      .columns(['tenant_id', 'idempotency_key'])
      .unique()
      .where(sql.ref('idempotency_key'), 'is not', null)
      .execute(),
  (db) => db.schema.createIndex('events_created_idx').on('events').column('created_at').execute(),
  (db) =>
    db.schema
      .createTable('deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('event_id', 'text', (c) => c.notNull().references('events.id').onDelete('cascade'))
      .addColumn('connection_id', 'text', (c) => c.notNull().references('connections.id').onDelete('cascade'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'timestamptz')
      // A worker's claim: until then no other worker takes it; after it, the delivery is due again.
      .addColumn('lease_until', 'timestamptz')
      .addColumn('leased_by', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .addColumn('delivered_at', 'timestamptz')
      .execute(),
  (db) =>
    db.schema
      .createIndex('deliveries_due_idx')
      .on('deliveries')
      .columns(['next_attempt_at'])
      .where(sql.ref('status'), 'in', sql`('pending', 'retrying', 'delivering')`)
      .execute(),
  (db) =>
    db.schema
      .createIndex('deliveries_connection_idx')
      .on('deliveries')
      .columns(['connection_id', 'created_at', 'id'])
      .execute(),
  (db) =>
    db.schema
      .createIndex('deliveries_tenant_updated_idx')
      .on('deliveries')
      .columns(['tenant_id', 'updated_at'])
      .execute(),
  (db) =>
    db.schema
      .createTable('delivery_attempts')
      .addColumn('delivery_id', 'text', (c) => c.notNull().references('deliveries.id').onDelete('cascade'))
      .addColumn('number', 'integer', (c) => c.notNull())
      .addColumn('started_at', 'timestamptz', (c) => c.notNull())
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addColumn('remote_address', 'text')
      .addColumn('response_status', 'integer')
      .addColumn('error', 'text')
      .addColumn('error_detail', 'text')
      .addPrimaryKeyConstraint('delivery_attempts_pk', ['delivery_id', 'number'])
      .execute(),
];
