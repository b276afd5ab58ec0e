import { type Kysely, sql } from 'kysely';
import type { AppContext } from '../../context.js';
import { randomBase62 } from '../../crypto/base62.js';
import type { DB } from '../../db/schema.js';
import { timedPing } from '../../db/ping.js';
import { errorFields } from '../../logger.js';
import { allChannelRows, type ChannelRow } from './channel-store.js';
import { openChannel } from './channels.js';
import { type Condition, DATABASE_UNAVAILABLE, evaluateConditions } from './conditions.js';
import { fingerprintOf, groupKeyOf } from './fingerprint.js';
import type { ChannelKind } from './kinds.js';
import type { AlertInstance, ChannelSender } from './notification.js';
import { type ChannelState, NoticePlans, type Waiting } from './notice-plans.js';
import { enqueueNotice, sendDueNotifications } from './outbox.js';
import { prepareRouting, readRoutingDocument, routeAlert, type RoutingDocument } from './rules.js';

export type EngineContext = Pick<
  AppContext,
  'config' | 'database' | 'db' | 'keyring' | 'log' | 'metrics' | 'now'
>;

const LEASE = 'alert-engine';
const PING_TIMEOUT_MS = 2_000;
const PURGE_INTERVAL_MS = 60 * 60 * 1000;
// One failed ping may be a blip; two in a row raise DatabaseUnavailable.
const FAILED_PINGS_TO_FIRE = 2;

/**
 * The alert engine: every ALERT_EVALUATION_INTERVAL_MS, the one process holding the lease evaluates
 * the conditions, records which alerts fire and which resolved, queues at most one notice per
 * channel their routes name and `(alertname, tenantId)` group (NoticePlans), and sends what is due.
 * Any number of processes run it; the lease and the claimed outbox make one notice, not one per
 * process.
 *
 * DatabaseUnavailable cannot use the database: the process that held the lease when pings started to
 * fail (no other can take it meanwhile) sends it straight to the channels it last read, and resolves
 * it through the outbox once the database answers again.
 */
export function startAlertEngine(ctx: EngineContext, sender: ChannelSender) {
  const { db, config } = ctx;
  const holder = `eng_${randomBase62(12)}`;
  const intervalMs = config.alerts.evaluationIntervalMs;
  const leaseMs = Math.max(3 * intervalMs, 5_000);
  let leader = false;
  let failedPings = 0;
  let lastRead: { doc: RoutingDocument; channels: ChannelRow[] } | undefined;
  let outage: { since: Date; notified: Map<string, Date> } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  let sending: Promise<void> | undefined;
  let lastPurge = 0;
  // Groups whose new alerts wait for the burst to end (see NoticePlans), from the last evaluation.
  let waiting: Waiting = new Map();

  const ping = () =>
    timedPing(ctx.database, PING_TIMEOUT_MS).then(
      () => true,
      () => false,
    );

  async function acquireLease(now: Date): Promise<boolean> {
    const result = await sql<{ holder: string }>`
      insert into alert_leases (name, holder, lease_until)
      values (${LEASE}, ${holder}, ${new Date(now.getTime() + leaseMs)})
      on conflict (name) do update set holder = excluded.holder, lease_until = excluded.lease_until
      where alert_leases.holder = excluded.holder or alert_leases.lease_until < ${now}
      returning holder`.execute(db);
    return result.rows.length > 0;
  }

  async function tick(): Promise<void> {
    const now = ctx.now();
    if (!(await ping())) {
      failedPings++;
      if (leader && failedPings >= FAILED_PINGS_TO_FIRE) await databaseDown(now);
      return;
    }
    failedPings = 0;
    if (outage) await databaseBack(now);
    leader = await acquireLease(now);
    if (!leader) return;
    const [conditions, doc, channels] = await Promise.all([
      evaluateConditions(db, now, config.alerts),
      readRoutingDocument(db).then(prepareRouting),
      allChannelRows(db),
    ]);
    lastRead = { doc, channels };
    await reconcile(conditions, doc, channels, now);
    // Sending runs beside evaluation, never inside it: a slow channel must not stop the alerts.
    sending ??= sendDueNotifications(ctx, sender)
      .then(() => undefined)
      .catch((error: unknown) => warn(error, 'sending alert notifications failed'))
      .finally(() => {
        sending = undefined;
      });
    if (now.getTime() - lastPurge >= PURGE_INTERVAL_MS) {
      lastPurge = now.getTime();
      await purgeAlertHistory(db, new Date(now.getTime() - config.delivery.retentionDays * 86_400_000));
    }
  }

  const warn = (error: unknown, message: string) => ctx.log.warn(errorFields(error), message);

  async function reconcile(conditions: Condition[], doc: RoutingDocument, channels: ChannelRow[], now: Date) {
    const enabled = new Set(channels.filter((c) => c.enabled).map((c) => c.id));
    const holding = new Map(conditions.map((condition) => [fingerprintOf(condition.labels), condition]));
    waiting = await db.transaction().execute(async (trx) => {
      const firing = await trx
        .selectFrom('alerts')
        .selectAll()
        .where('status', '=', 'firing')
        .forUpdate()
        .execute();
      const wasFiring = new Map(firing.map((row) => [row.fingerprint, row]));
      // What each channel was told of every alert concerned, in one read.
      const states = await channelStates(trx, [...new Set([...holding.keys(), ...wasFiring.keys()])]);
      const plans = new NoticePlans();
      for (const [fingerprint, condition] of holding) {
        const startsAt = await recordFiring(trx, fingerprint, condition, wasFiring.get(fingerprint), now);
        const alert: AlertInstance = { fingerprint, ...condition, status: 'firing', startsAt, endsAt: null };
        for (const route of routeAlert(condition.labels, doc)) {
          if (enabled.has(route.channelId)) plans.firing(alert, route, states.get(fingerprint));
        }
      }
      for (const row of firing) {
        if (holding.has(row.fingerprint)) continue;
        await trx
          .updateTable('alerts')
          .set({ status: 'resolved', ends_at: now, updated_at: now })
          .where('fingerprint', '=', row.fingerprint)
          .execute();
        const alert: AlertInstance = {
          fingerprint: row.fingerprint,
          labels: row.labels,
          annotations: row.annotations,
          status: 'resolved',
          startsAt: new Date(row.starts_at),
          endsAt: now,
        };
        await resolvedFor(trx, alert, states.get(row.fingerprint), enabled, plans);
      }
      const { notices, waiting: next } = plans.due(now, waiting);
      for (const notice of notices) {
        await enqueueNotice(trx, notice, now);
        await setChannelStates(trx, notice.channelId, notice.alerts, now);
      }
      return next;
    });
  }

  async function databaseDown(now: Date): Promise<void> {
    outage ??= { since: now, notified: new Map() };
    if (!lastRead) return;
    const { labels, annotations } = DATABASE_UNAVAILABLE;
    const alert = {
      fingerprint: fingerprintOf(labels),
      labels,
      annotations,
      status: 'firing' as const,
      startsAt: outage.since,
      endsAt: null,
    };
    for (const route of routeAlert(labels, lastRead.doc)) {
      const channel = lastRead.channels.find((c) => c.id === route.channelId && c.enabled);
      const last = outage.notified.get(route.channelId);
      if (!channel || (last && now.getTime() - last.getTime() < route.repeatIntervalSeconds * 1000)) continue;
      const result = await sender.send(openChannel(ctx, channel), { status: 'firing', alerts: [alert] });
      ctx.metrics.alertNotifications.inc({
        channel_kind: channel.kind as ChannelKind,
        outcome: result.ok ? 'sent' : 'failed',
      });
      // Not taken: tried again at the next evaluation, for as long as the outage lasts.
      if (result.ok) outage.notified.set(route.channelId, now);
    }
  }

  async function databaseBack(now: Date): Promise<void> {
    const ended = outage;
    if (!ended || ended.notified.size === 0) {
      outage = undefined;
      return;
    }
    const { labels, annotations } = DATABASE_UNAVAILABLE;
    const fingerprint = fingerprintOf(labels);
    await db.transaction().execute(async (trx) => {
      await trx
        .insertInto('alerts')
        .values({
          fingerprint,
          labels: JSON.stringify(labels),
          annotations: JSON.stringify(annotations),
          status: 'resolved',
          starts_at: ended.since,
          ends_at: now,
          updated_at: now,
        })
        .onConflict((oc) =>
          oc
            .column('fingerprint')
            .doUpdateSet({ status: 'resolved', starts_at: ended.since, ends_at: now, updated_at: now }),
        )
        .execute();
      const alert: AlertInstance = {
        fingerprint,
        labels,
        annotations,
        status: 'resolved',
        startsAt: ended.since,
        endsAt: now,
      };
      for (const channelId of ended.notified.keys()) {
        await enqueueNotice(trx, { groupKey: groupKeyOf(labels), channelId, alerts: [alert] }, now);
        await setChannelStates(trx, channelId, [alert], now);
      }
    });
    // Only once the resolved notices are queued: if that write failed, the next evaluation tries again.
    outage = undefined;
  }

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = tick()
        .catch((error: unknown) => warn(error, 'alert evaluation failed'))
        .finally(schedule);
    }, intervalMs);
  };
  schedule();

  return {
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await running;
      await sending;
      // Another process may take over at its next evaluation instead of after the lease.
      if (leader) {
        await db
          .deleteFrom('alert_leases')
          .where('name', '=', LEASE)
          .where('holder', '=', holder)
          .execute()
          .catch((error: unknown) => warn(error, 'releasing the alert lease failed'));
      }
    },
  };
}

export type AlertEngine = ReturnType<typeof startAlertEngine>;

const sameStrings = (a: Record<string, string>, b: Record<string, string>): boolean =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

/**
 * A condition that holds: a new alert, one firing again, or a firing one whose description changed.
 * Answers when it started firing.
 */
async function recordFiring(
  trx: Kysely<DB>,
  fingerprint: string,
  condition: Condition,
  firing: { annotations: Record<string, string>; starts_at: Date | string } | undefined,
  now: Date,
): Promise<Date> {
  const annotations = JSON.stringify(condition.annotations);
  if (firing) {
    if (!sameStrings(firing.annotations, condition.annotations)) {
      await trx
        .updateTable('alerts')
        .set({ annotations, updated_at: now })
        .where('fingerprint', '=', fingerprint)
        .execute();
    }
    return new Date(firing.starts_at);
  }
  await trx
    .insertInto('alerts')
    .values({
      fingerprint,
      labels: JSON.stringify(condition.labels),
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
  return now;
}

/** What each channel was last told of these alerts, by fingerprint then channel. */
async function channelStates(
  trx: Kysely<DB>,
  fingerprints: string[],
): Promise<Map<string, Map<string, ChannelState>>> {
  const states = new Map<string, Map<string, ChannelState>>();
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
async function setChannelStates(
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

/** The channels told a resolved alert was firing will hear it resolved (Alertmanager's send_resolved). */
async function resolvedFor(
  trx: Kysely<DB>,
  alert: AlertInstance,
  told: Map<string, ChannelState> | undefined,
  enabled: Set<string>,
  plans: NoticePlans,
) {
  for (const [channelId, state] of told ?? []) {
    if (state.status !== 'firing') continue;
    if (enabled.has(channelId)) {
      plans.resolved(alert, channelId);
      continue;
    }
    // Disabled meanwhile: it hears nothing now, and counts as never told of this alert.
    await trx
      .deleteFrom('alert_channel_state')
      .where('fingerprint', '=', alert.fingerprint)
      .where('channel_id', '=', channelId)
      .execute();
  }
}

/**
 * Alert history is kept as long as deliveries (DELIVERY_RETENTION_DAYS): sent and failed notices,
 * resolved alerts and what their channels were told. Nothing that still fires or waits is touched.
 */
async function purgeAlertHistory(db: Kysely<DB>, cutoff: Date): Promise<void> {
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
