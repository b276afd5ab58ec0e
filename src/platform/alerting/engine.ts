import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import { randomBase62 } from '../../crypto/base62.js';
import { timedPing } from '../../db/ping.js';
import type { DB } from '../../db/schema.js';
import { errorFields } from '../../logger.js';
import {
  describeAlert,
  forgetToldState,
  lockFiringAlerts,
  purgeAlertHistory,
  readToldStates,
  recordResolvedAlert,
  releaseLease,
  resolveAlert,
  setToldStates,
  startAlert,
  takeLease,
} from './alerts-store.js';
import { allChannelRows, type ChannelRow } from './channel-store.js';
import { openChannel } from './channels.js';
import { evaluateConditions, type Condition } from './conditions.js';
import {
  concernedFingerprints,
  decideAlerts,
  outageAlert,
  outageChannelsDue,
  planNotices,
  type Evaluation,
  type PlannedNotices,
} from './evaluation.js';
import { groupKeyOf } from './fingerprint.js';
import type { Waiting } from './notice-plans.js';
import type { ChannelSender } from './notification.js';
import { enqueueNotice, sendDueNotifications } from './outbox.js';
import { prepareRouting, readRoutingDocument, type RoutingDocument } from './rules.js';

export type EngineContext = Pick<
  AppContext,
  'config' | 'database' | 'db' | 'keyring' | 'log' | 'metrics' | 'now'
>;

const LEASE = 'alert-engine';
const PING_TIMEOUT_MS = 2_000;
const PURGE_INTERVAL_MS = 60 * 60 * 1000;
// One failed ping may be a blip; two in a row raise DatabaseUnavailable.
const FAILED_PINGS_TO_FIRE = 2;

/** What an evaluation reads: the conditions that hold, where alerts go, and the channels. */
export interface Reading {
  conditions: Condition[];
  doc: RoutingDocument;
  channels: ChannelRow[];
}

/** What one engine keeps from one evaluation to the next. */
interface EngineState {
  readonly holder: string;
  readonly leaseMs: number;
  leader: boolean;
  failedPings: number;
  /** The routing and channels last read: where DatabaseUnavailable goes when the database cannot say. */
  lastRead?: Pick<Reading, 'doc' | 'channels'>;
  /** Since when the database is down, and which channels were told when. */
  outage?: { since: Date; notified: Map<string, Date> };
  /** Groups whose new alerts wait for the burst to end (see NoticePlans), from the last evaluation. */
  waiting: Waiting;
  lastPurge: number;
  sending?: Promise<void>;
}

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
  const intervalMs = ctx.config.alerts.evaluationIntervalMs;
  const state: EngineState = {
    holder: `eng_${randomBase62(12)}`,
    leaseMs: Math.max(3 * intervalMs, 5_000),
    leader: false,
    failedPings: 0,
    waiting: new Map(),
    lastPurge: 0,
  };
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = tick(ctx, sender, state)
        .catch((error: unknown) => warn(ctx, error, 'alert evaluation failed'))
        .finally(schedule);
    }, intervalMs);
  };
  schedule();

  return {
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await running;
      await state.sending;
      // Another process may take over at its next evaluation instead of after the lease.
      if (state.leader) {
        await releaseLease(ctx.db, LEASE, state.holder).catch((error: unknown) =>
          warn(ctx, error, 'releasing the alert lease failed'),
        );
      }
    },
  };
}

export type AlertEngine = ReturnType<typeof startAlertEngine>;

const warn = (ctx: EngineContext, error: unknown, message: string) =>
  ctx.log.warn(errorFields(error), message);

/** One evaluation, phase by phase: ping, lease, read, reconcile, send, purge. */
async function tick(ctx: EngineContext, sender: ChannelSender, state: EngineState): Promise<void> {
  const now = ctx.now();
  const answered = await timedPing(ctx.database, PING_TIMEOUT_MS).then(
    () => true,
    () => false,
  );
  if (!answered) {
    state.failedPings++;
    if (state.leader && state.failedPings >= FAILED_PINGS_TO_FIRE)
      await databaseDown(ctx, sender, state, now);
    return;
  }
  state.failedPings = 0;
  if (state.outage) await databaseBack(ctx.db, state, now);
  const until = new Date(now.getTime() + state.leaseMs);
  state.leader = await takeLease(ctx.db, { name: LEASE, holder: state.holder, until }, now);
  if (!state.leader) return;
  const reading = await readFigures(ctx, now);
  state.lastRead = { doc: reading.doc, channels: reading.channels };
  state.waiting = await reconcile(ctx.db, reading, state.waiting, now);
  // Sending runs beside evaluation, never inside it: a slow channel must not stop the alerts.
  state.sending ??= sendDueNotifications(ctx, sender)
    .then(() => undefined)
    .catch((error: unknown) => warn(ctx, error, 'sending alert notifications failed'))
    .finally(() => {
      state.sending = undefined;
    });
  if (now.getTime() - state.lastPurge >= PURGE_INTERVAL_MS) {
    state.lastPurge = now.getTime();
    // Alert history is kept as long as deliveries (DELIVERY_RETENTION_DAYS).
    await purgeAlertHistory(ctx.db, new Date(now.getTime() - ctx.config.delivery.retentionDays * 86_400_000));
  }
}

/** Reads what an evaluation needs, its routing patterns compiled. */
export async function readFigures(ctx: Pick<EngineContext, 'config' | 'db'>, now: Date): Promise<Reading> {
  const [conditions, doc, channels] = await Promise.all([
    evaluateConditions(ctx.db, now, ctx.config.alerts),
    readRoutingDocument(ctx.db).then(prepareRouting),
    allChannelRows(ctx.db),
  ]);
  return { conditions, doc, channels };
}

/**
 * Decides and records, in one transaction holding the firing alerts, which alerts fire and which
 * resolved, and queues the notices due (decideAlerts, planNotices). Answers what waits now.
 */
export function reconcile(db: Kysely<DB>, reading: Reading, waiting: Waiting, now: Date): Promise<Waiting> {
  return db.transaction().execute(async (trx) => {
    const evaluation = decideAlerts(reading.conditions, await lockFiringAlerts(trx), now);
    const told = await readToldStates(trx, concernedFingerprints(evaluation));
    const planned = planNotices(evaluation, {
      doc: reading.doc,
      channels: reading.channels,
      told,
      waiting,
      now,
    });
    await persistEvaluation(trx, evaluation, planned, now);
    return planned.waiting;
  });
}

/** Writes what an evaluation decided: the alerts, the told states it drops, the notices it queues. */
export async function persistEvaluation(
  trx: Kysely<DB>,
  evaluation: Evaluation,
  planned: PlannedNotices,
  now: Date,
): Promise<void> {
  for (const { alert, record } of evaluation.firing) {
    if (record === 'start') await startAlert(trx, alert, now);
    else if (record === 'describe') await describeAlert(trx, alert.fingerprint, alert.annotations, now);
  }
  for (const alert of evaluation.resolved) await resolveAlert(trx, alert.fingerprint, now);
  for (const { fingerprint, channelId } of planned.forget) await forgetToldState(trx, fingerprint, channelId);
  for (const notice of planned.notices) {
    await enqueueNotice(trx, notice, now);
    await setToldStates(trx, notice.channelId, notice.alerts, now);
  }
}

/** The database does not answer: DatabaseUnavailable goes straight to the channels last read. */
async function databaseDown(
  ctx: EngineContext,
  sender: ChannelSender,
  state: EngineState,
  now: Date,
): Promise<void> {
  const outage = (state.outage ??= { since: now, notified: new Map() });
  if (!state.lastRead) return;
  const alert = outageAlert(outage.since);
  for (const channel of outageChannelsDue(state.lastRead, outage.notified, now)) {
    const result = await sender.send(openChannel(ctx, channel), { status: 'firing', alerts: [alert] });
    ctx.metrics.alertNotifications.inc({
      channel_kind: channel.kind,
      outcome: result.ok ? 'sent' : 'failed',
    });
    // Not taken: tried again at the next evaluation, for as long as the outage lasts.
    if (result.ok) outage.notified.set(channel.id, now);
  }
}

/** The database answers again: the channels told of the outage hear it resolved, through the outbox. */
async function databaseBack(db: Kysely<DB>, state: EngineState, now: Date): Promise<void> {
  const ended = state.outage;
  if (!ended || ended.notified.size === 0) {
    state.outage = undefined;
    return;
  }
  const alert = outageAlert(ended.since, now);
  await db.transaction().execute(async (trx) => {
    await recordResolvedAlert(trx, alert, now);
    for (const channelId of ended.notified.keys()) {
      await enqueueNotice(trx, { groupKey: groupKeyOf(alert.labels), channelId, alerts: [alert] }, now);
      await setToldStates(trx, channelId, [alert], now);
    }
  });
  // Only once the resolved notices are queued: if that write failed, the next evaluation tries again.
  state.outage = undefined;
}
