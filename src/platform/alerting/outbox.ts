import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import { newId } from '../../crypto/ids.js';
import type { DB, NoticeAlert } from '../../db/schema.js';
import {
  claimDueNotices,
  finishNotice,
  forgetChannels,
  insertPendingNotice,
  supersedePendingNotices,
  type NoticeOutcome,
  type NotificationRow,
} from './alerts-store.js';
import { allChannelRows, recordChannelAttempt, type ChannelRow } from './channel-store.js';
import { openChannel } from './channels.js';
import type { GroupNotice } from './notice-plans.js';
import type { AlertInstance, ChannelSender, ChannelSendResult } from './notification.js';

// Alertmanager's webhook has `truncatedAlerts` for this: a notice lists at most this many alerts
// (firing first), and says how many more its group has.
const MAX_ALERTS_PER_NOTICE = 100;

const stored = (alert: AlertInstance): NoticeAlert => ({
  fingerprint: alert.fingerprint,
  status: alert.status,
  labels: alert.labels,
  annotations: alert.annotations,
  startsAt: alert.startsAt.toISOString(),
  endsAt: alert.endsAt ? alert.endsAt.toISOString() : null,
});

const instance = (alert: NoticeAlert): AlertInstance => ({
  ...alert,
  startsAt: new Date(alert.startsAt),
  endsAt: alert.endsAt === null ? null : new Date(alert.endsAt),
});

/**
 * Queues one notice of a group for one channel; call it in the transaction that decided it. The
 * notice of the group still waiting for that channel is stale once a newer one is queued (a firing
 * notice must not arrive after the resolved one), so at most one waits per group and channel; what
 * the stale one said had resolved is carried into the new one, or the channel would never hear it.
 */
export async function enqueueNotice(db: Kysely<DB>, notice: GroupNotice, at: Date): Promise<void> {
  const superseded = await supersedePendingNotices(db, notice.groupKey, notice.channelId);
  const alerts = withResolvedFrom(notice.alerts.map(stored), superseded.flat());
  await insertPendingNotice(
    db,
    {
      id: newId('ntf'),
      group_key: notice.groupKey,
      channel_id: notice.channelId,
      alerts: alerts.slice(0, MAX_ALERTS_PER_NOTICE),
      truncated_alerts: Math.max(0, alerts.length - MAX_ALERTS_PER_NOTICE),
      // Alertmanager's rule: a group is firing while any of its alerts is.
      status: alerts.some((alert) => alert.status === 'firing') ? 'firing' : 'resolved',
    },
    at,
  );
}

/** The alerts of a new notice, then those a superseded one said had resolved that it does not list. */
export function withResolvedFrom(alerts: NoticeAlert[], superseded: NoticeAlert[]): NoticeAlert[] {
  const all = [...alerts];
  const listed = new Set(alerts.map((alert) => alert.fingerprint));
  for (const alert of superseded) {
    if (alert.status !== 'resolved' || listed.has(alert.fingerprint)) continue;
    listed.add(alert.fingerprint);
    all.push(alert);
  }
  return all;
}

type OutboxContext = Pick<AppContext, 'config' | 'db' | 'keyring' | 'log' | 'metrics' | 'now'>;

// At most this many notices are claimed at once; the rest wait for the next round.
const CLAIM_LIMIT = 50;

/**
 * Sends the queued notices that are due: each is claimed first (its next attempt pushed past the
 * longest a send can take), so two processes never send the same notice while both are healthy;
 * a process that dies mid-send leaves it to be claimed again. A channel that does not take it is
 * tried again on ALERT_RETRY_SCHEDULE, then the notice is marked failed.
 */
export async function sendDueNotifications(ctx: OutboxContext, sender: ChannelSender): Promise<number> {
  const now = ctx.now();
  const claimUntil = new Date(now.getTime() + ctx.config.delivery.timeoutMs * 2 + 5_000);
  const claimed = await claimDueNotices(ctx.db, now, claimUntil, CLAIM_LIMIT);
  if (claimed.length === 0) return 0;
  const channels = new Map((await allChannelRows(ctx.db)).map((row) => [row.id, row]));
  const gone = new Set<string>();
  await Promise.all(
    claimed.map(async (notice) => {
      const claim = { id: notice.id, until: claimUntil };
      const channel = channels.get(notice.channel_id);
      if (channel?.enabled) return sendNotice(ctx, sender, channel, notice, claim);
      // Deleted or switched off since: nothing to send any more, and the channel counts as never
      // told, so once enabled again it hears of the alerts still firing at the next evaluation.
      const error = 'the channel is gone or disabled';
      await finishNotice(ctx.db, claim, failedOutcome(notice.attempts, error));
      gone.add(notice.channel_id);
    }),
  );
  // Once per channel, not once per notice of it.
  await forgetChannels(ctx.db, [...gone]);
  return claimed.length;
}

const failedOutcome = (attempts: number, lastError: string | null): NoticeOutcome => ({
  state: 'failed',
  attempts,
  nextAttemptAt: null,
  lastError,
  sentAt: null,
});

/**
 * How an attempt ends (pure): sent, or not taken and tried again after the schedule's next delay,
 * or failed for good once the schedule is spent. `attempts` counts this one.
 */
export function attemptOutcome(
  result: ChannelSendResult,
  attempts: number,
  schedule: readonly number[],
  now: Date,
): NoticeOutcome {
  if (result.ok) return { state: 'sent', attempts, nextAttemptAt: null, lastError: null, sentAt: now };
  const delay = schedule[attempts - 1];
  if (delay === undefined) return failedOutcome(attempts, result.error);
  const nextAttemptAt = new Date(now.getTime() + delay * 1000);
  return { state: 'pending', attempts, nextAttemptAt, lastError: result.error, sentAt: null };
}

/** One attempt at one claimed notice: sends it, counts it, remembers it on the channel, ends it. */
async function sendNotice(
  ctx: OutboxContext,
  sender: ChannelSender,
  channel: ChannelRow,
  notice: NotificationRow,
  claim: { id: string; until: Date },
): Promise<void> {
  const result = await sender.send(openChannel(ctx, channel), {
    id: notice.id,
    status: notice.status,
    alerts: notice.alerts.map(instance),
    truncatedAlerts: notice.truncated_alerts,
  });
  ctx.metrics.alertNotifications.inc({
    channel_kind: channel.kind,
    outcome: result.ok ? 'sent' : 'failed',
  });
  await recordChannelAttempt(ctx.db, channel.id, { at: ctx.now().toISOString(), ...result, test: false });
  if (!result.ok) {
    ctx.log.warn(
      { notificationId: notice.id, channelId: channel.id, error: result.error },
      'alert notification not taken',
    );
  }
  const outcome = attemptOutcome(
    result,
    notice.attempts + 1,
    ctx.config.alerts.retryScheduleSeconds,
    ctx.now(),
  );
  await finishNotice(ctx.db, claim, outcome);
}
