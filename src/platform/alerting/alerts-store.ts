import { sql, type Kysely, type Selectable } from 'kysely';
import type { AlertNotificationsTable, AlertsTable, DB, NoticeAlert } from '../../db/schema.js';
import type { ChannelState } from './notice-plans.js';
import type { AlertInstance } from './notification.js';

export interface FiringAlert {
  fingerprint: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
}

/** The alerts firing now, the most recent first (a platform has a handful; at most `limit`). */
export async function firingAlerts(db: Kysely<DB>, limit: number): Promise<FiringAlert[]> {
  const rows = await db
    .selectFrom('alerts')
    .select(['fingerprint', 'labels', 'annotations', 'starts_at'])
    .where('status', '=', 'firing')
    .orderBy('starts_at', 'desc')
    .orderBy('fingerprint')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    fingerprint: row.fingerprint,
    labels: row.labels,
    annotations: row.annotations,
    startsAt: new Date(row.starts_at).toISOString(),
  }));
}

// What follows is the alert engine's store: its lease, the alerts it records, what each channel was
// told of them, and the outbox of notices. Several processes run the engine; the lease and the
// claimed outbox keep them from doing the same work twice.

export type AlertRow = Selectable<AlertsTable>;
export type NotificationRow = Selectable<AlertNotificationsTable>;

/** What each channel was last told of an alert, by fingerprint then channel. */
export type ToldStates = Map<string, Map<string, ChannelState>>;

/**
 * Takes the lease, or renews it: answers whether this holder has it until `until`. A lease held by
 * another is taken only once it has run out.
 */
export async function takeLease(
  db: Kysely<DB>,
  lease: { name: string; holder: string; until: Date },
  now: Date,
): Promise<boolean> {
  const result = await sql<{ holder: string }>`
    insert into alert_leases (name, holder, lease_until)
    values (${lease.name}, ${lease.holder}, ${lease.until})
    on conflict (name) do update set holder = excluded.holder, lease_until = excluded.lease_until
    where alert_leases.holder = excluded.holder or alert_leases.lease_until < ${now}
    returning holder`.execute(db);
  return result.rows.length > 0;
}

/** Gives the lease up, if this holder still has it. */
export async function releaseLease(db: Kysely<DB>, name: string, holder: string): Promise<void> {
  await db.deleteFrom('alert_leases').where('name', '=', name).where('holder', '=', holder).execute();
}

/** The alerts recorded as firing, locked until the transaction ends. */
export function lockFiringAlerts(trx: Kysely<DB>): Promise<AlertRow[]> {
  return trx.selectFrom('alerts').selectAll().where('status', '=', 'firing').forUpdate().execute();
}

/** Records a new alert firing, or one that fired before firing again: it starts now. */
export async function startAlert(
  trx: Kysely<DB>,
  alert: Pick<AlertInstance, 'fingerprint' | 'labels' | 'annotations'>,
  now: Date,
): Promise<void> {
  const annotations = JSON.stringify(alert.annotations);
  await trx
    .insertInto('alerts')
    .values({
      fingerprint: alert.fingerprint,
      labels: JSON.stringify(alert.labels),
      annotations,
      status: 'firing',
      starts_at: now,
      ends_at: null,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc
        .column('fingerprint')
        .doUpdateSet({ annotations, status: 'firing', starts_at: now, ends_at: null, updated_at: now }),
    )
    .execute();
}

/** A firing alert whose description changed. */
export async function describeAlert(
  trx: Kysely<DB>,
  fingerprint: string,
  annotations: Record<string, string>,
  now: Date,
): Promise<void> {
  await trx
    .updateTable('alerts')
    .set({ annotations: JSON.stringify(annotations), updated_at: now })
    .where('fingerprint', '=', fingerprint)
    .execute();
}

/** A firing alert whose condition no longer holds. */
export async function resolveAlert(trx: Kysely<DB>, fingerprint: string, now: Date): Promise<void> {
  await trx
    .updateTable('alerts')
    .set({ status: 'resolved', ends_at: now, updated_at: now })
    .where('fingerprint', '=', fingerprint)
    .execute();
}

/** Records an alert as resolved, with when it started and ended, whether or not it was recorded. */
export async function recordResolvedAlert(trx: Kysely<DB>, alert: AlertInstance, now: Date): Promise<void> {
  const { startsAt, endsAt } = alert;
  await trx
    .insertInto('alerts')
    .values({
      fingerprint: alert.fingerprint,
      labels: JSON.stringify(alert.labels),
      annotations: JSON.stringify(alert.annotations),
      status: 'resolved',
      starts_at: startsAt,
      ends_at: endsAt,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc
        .column('fingerprint')
        .doUpdateSet({ status: 'resolved', starts_at: startsAt, ends_at: endsAt, updated_at: now }),
    )
    .execute();
}

/** What each channel was last told of these alerts, by fingerprint then channel. */
export async function readToldStates(trx: Kysely<DB>, fingerprints: string[]): Promise<ToldStates> {
  const states: ToldStates = new Map();
  if (fingerprints.length === 0) return states;
  const rows = await trx
    .selectFrom('alert_channel_state')
    .selectAll()
    .where('fingerprint', 'in', fingerprints)
    .execute();
  for (const row of rows) {
    let told = states.get(row.fingerprint);
    if (!told) states.set(row.fingerprint, (told = new Map()));
    told.set(row.channel_id, { status: row.last_status, at: new Date(row.last_notified_at) });
  }
  return states;
}

/** Records that the channel was told of these alerts, each with the status it was told. */
export async function setToldStates(
  trx: Kysely<DB>,
  channelId: string,
  alerts: readonly AlertInstance[],
  at: Date,
): Promise<void> {
  if (alerts.length === 0) return;
  await trx
    .insertInto('alert_channel_state')
    .values(
      alerts.map((alert) => ({
        fingerprint: alert.fingerprint,
        channel_id: channelId,
        last_status: alert.status,
        last_notified_at: at,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['fingerprint', 'channel_id']).doUpdateSet((eb) => ({
        last_status: eb.ref('excluded.last_status'),
        last_notified_at: eb.ref('excluded.last_notified_at'),
      })),
    )
    .execute();
}

/** The channel counts as never told of this alert. */
export async function forgetToldState(
  trx: Kysely<DB>,
  fingerprint: string,
  channelId: string,
): Promise<void> {
  await trx
    .deleteFrom('alert_channel_state')
    .where('fingerprint', '=', fingerprint)
    .where('channel_id', '=', channelId)
    .execute();
}

/** These channels count as never told of any alert. */
export async function forgetChannels(db: Kysely<DB>, channelIds: string[]): Promise<void> {
  if (channelIds.length === 0) return;
  await db.deleteFrom('alert_channel_state').where('channel_id', 'in', channelIds).execute();
}

/**
 * Deletes what is older than the cutoff: sent and failed notices, resolved alerts and what their
 * channels were told. Nothing that still fires or waits is touched.
 */
export async function purgeAlertHistory(db: Kysely<DB>, cutoff: Date): Promise<void> {
  await db
    .deleteFrom('alert_notifications')
    .where('state', 'in', ['sent', 'failed'])
    .where('created_at', '<', cutoff)
    .execute();
  const expired = db
    .selectFrom('alerts')
    .select('fingerprint')
    .where('status', '=', 'resolved')
    .where('updated_at', '<', cutoff);
  await db.deleteFrom('alert_channel_state').where('fingerprint', 'in', expired).execute();
  await db.deleteFrom('alerts').where('status', '=', 'resolved').where('updated_at', '<', cutoff).execute();
}

/** Marks the notice of a group still waiting for a channel failed; answers the alerts it listed. */
export async function supersedePendingNotices(
  trx: Kysely<DB>,
  groupKey: string,
  channelId: string,
): Promise<NoticeAlert[][]> {
  const rows = await trx
    .updateTable('alert_notifications')
    .set({ state: 'failed', next_attempt_at: null, last_error: 'superseded by a newer notice' })
    .where('group_key', '=', groupKey)
    .where('channel_id', '=', channelId)
    .where('state', '=', 'pending')
    .returning('alerts')
    .execute();
  return rows.map((row) => row.alerts);
}

/** Queues a notice, due at once. */
export async function insertPendingNotice(
  trx: Kysely<DB>,
  notice: Pick<NotificationRow, 'id' | 'group_key' | 'channel_id' | 'status' | 'alerts' | 'truncated_alerts'>,
  at: Date,
): Promise<void> {
  await trx
    .insertInto('alert_notifications')
    .values({
      ...notice,
      alerts: JSON.stringify(notice.alerts),
      state: 'pending',
      attempts: 0,
      next_attempt_at: at,
      last_error: null,
      created_at: at,
      sent_at: null,
    })
    .execute();
}

/**
 * Claims up to `limit` pending notices due at `now`, the longest waiting first: their next attempt
 * moves to `until`, and rows another process is claiming are skipped, not waited for.
 */
export async function claimDueNotices(
  db: Kysely<DB>,
  now: Date,
  until: Date,
  limit: number,
): Promise<NotificationRow[]> {
  const claimed = await sql<NotificationRow>`
    update alert_notifications set next_attempt_at = ${until}
    where id in (
      select id from alert_notifications
      where state = 'pending' and next_attempt_at <= ${now}
      order by next_attempt_at
      limit ${limit}
      for update skip locked)
    returning *`.execute(db);
  return claimed.rows;
}

/** How an attempt at a notice ended. */
export interface NoticeOutcome {
  state: NotificationRow['state'];
  attempts: number;
  nextAttemptAt: Date | null;
  lastError: string | null;
  sentAt: Date | null;
}

/**
 * Ends an attempt, if the claim still holds: a notice superseded meanwhile, or claimed again after
 * this send outlived its claim, is left to what happened to it since.
 */
export async function finishNotice(
  db: Kysely<DB>,
  claim: { id: string; until: Date },
  outcome: NoticeOutcome,
): Promise<void> {
  await db
    .updateTable('alert_notifications')
    .set({
      state: outcome.state,
      attempts: outcome.attempts,
      next_attempt_at: outcome.nextAttemptAt,
      last_error: outcome.lastError,
      sent_at: outcome.sentAt,
    })
    .where('id', '=', claim.id)
    .where('state', '=', 'pending')
    .where('next_attempt_at', '=', claim.until)
    .execute();
}
