import { sql, type Kysely } from 'kysely';

// Alerting channels, the routing document and the alert engine's state (issue: platform operations).
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const step of steps) await step(db);
}

/** The statements, in order: one table or index each. */
const steps: Array<(db: Kysely<unknown>) => Promise<unknown>> = [
  (db) =>
    db.schema
      .createTable('alert_channels')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('enabled', 'boolean', (c) => c.notNull())
      // The fields that are not secret, as given.
      .addColumn('config', 'jsonb', (c) => c.notNull())
      // The secret fields as one JSON object, AES-256-GCM under the alert-channel-secrets key, bound to
      // the channel ID; their names kept beside it so a list never needs to open it.
      .addColumn('secrets_sealed', 'text', (c) => c.notNull())
      .addColumn('secret_fields', 'jsonb', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute(),
  // One row: the routing document, replaced whole, and its revision for If-Match.
  (db) =>
    db.schema
      .createTable('alert_routing')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('revision', 'integer', (c) => c.notNull())
      .addColumn('document', 'jsonb', (c) => c.notNull())
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute(),
  // Which process evaluates alerts: one holder at a time, for as long as its lease runs.
  (db) =>
    db.schema
      .createTable('alert_leases')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('lease_until', 'timestamptz', (c) => c.notNull())
      .execute(),
  // Every alert the platform raised, firing or resolved, by fingerprint (a hash of its labels).
  (db) =>
    db.schema
      .createTable('alerts')
      .addColumn('fingerprint', 'text', (c) => c.primaryKey())
      .addColumn('labels', 'jsonb', (c) => c.notNull())
      .addColumn('annotations', 'jsonb', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('starts_at', 'timestamptz', (c) => c.notNull())
      .addColumn('ends_at', 'timestamptz')
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
      .execute(),
  // Notifications to send (an outbox): written before sending, retried until sent or out of
  // attempts, so a process that dies mid-send leaves them to the next evaluator (at least once).
  (db) =>
    db.schema
      .createTable('alert_notifications')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', 'timestamptz')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('sent_at', 'timestamptz')
      .execute(),
  (db) =>
    db.schema
      .createIndex('alert_notifications_due_idx')
      .on('alert_notifications')
      .column('next_attempt_at')
      .where(sql.ref('state'), '=', 'pending')
      .execute(),
  // When each alert was last notified to each channel: what repeatIntervalSeconds is measured from.
  (db) =>
    db.schema
      .createTable('alert_channel_state')
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('last_status', 'text', (c) => c.notNull())
      .addColumn('last_notified_at', 'timestamptz', (c) => c.notNull())
      .addPrimaryKeyConstraint('alert_channel_state_pk', ['fingerprint', 'channel_id'])
      .execute(),
  // What the alert conditions and the monitoring window read: deliveries that failed or were
  // delivered lately, and attempts in a window.
  (db) =>
    db.schema
      .createIndex('deliveries_delivered_idx')
      .on('deliveries')
      .column('delivered_at')
      .where(sql.ref('delivered_at'), 'is not', null)
      .execute(),
  (db) =>
    db.schema
      .createIndex('deliveries_failed_idx')
      .on('deliveries')
      .column('updated_at')
      .where(sql.ref('status'), '=', 'failed')
      .execute(),
  (db) =>
    db.schema
      .createIndex('delivery_attempts_started_idx')
      .on('delivery_attempts')
      .column('started_at')
      .execute(),
];
