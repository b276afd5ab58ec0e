import { type Kysely, type Selectable, sql } from 'kysely';
import type { AppContext } from '../../context.js';
import { newId } from '../../crypto/ids.js';
import type { AlertNotificationsTable, DB, NoticeAlert } from '../../db/schema.js';
import { allChannelRows, recordChannelAttempt } from './channel-store.js';
import { openChannel } from './channels.js';
import type { ChannelKind } from './kinds.js';
import type { AlertInstance, ChannelSender } from './notification.js';

type NotificationRow = Selectable<AlertNotificationsTable>;

// Alertmanager's webhook has `truncatedAlerts` for this: a notice lists at most this many alerts
// (firing first), and says how many more its group has.
const MAX_ALERTS_PER_NOTICE = 100;

/** What a channel is to be told of one group: the alerts, firing first. */
export interface GroupNotice {
  groupKey: string;
  channelId: string;
  alerts: AlertInstance[];
}

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
  const superseded = await db
    .updateTable('alert_notifications')
    .set({ state: 'failed', next_attempt_at: null, last_error: 'superseded by a newer notice' })
    .where('group_key', '=', notice.groupKey)
    .where('channel_id', '=', notice.channelId)
    .where('state', '=', 'pending')
    .returning('alerts')
    .execute();
  const alerts = notice.alerts.map(stored);
  const listed = new Set(alerts.map((alert) => alert.fingerprint));
  for (const alert of superseded.flatMap((row) => row.alerts)) {
    if (alert.status !== 'resolved' || listed.has(alert.fingerprint)) continue;
    listed.add(alert.fingerprint);
    alerts.push(alert);
  }
  await db
    .insertInto('alert_notifications')
    .values({
      id: newId('ntf'),
      group_key: notice.groupKey,
      alerts: JSON.stringify(alerts.slice(0, MAX_ALERTS_PER_NOTICE)),
      truncated_alerts: Math.max(0, alerts.length - MAX_ALERTS_PER_NOTICE),
      channel_id: notice.channelId,
      // Alertmanager's rule: a group is firing while any of its alerts is.
      status: alerts.some((alert) => alert.status === 'firing') ? 'firing' : 'resolved',
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
 * Sends the queued notices that are due: each is claimed first (its next attempt pushed past the
 * longest a send can take), so two processes never send the same notice while both are healthy;
 * a process that dies mid-send leaves it to be claimed again. A channel that does not take it is
 * tried again on ALERT_RETRY_SCHEDULE, then the notice is marked failed.
 */
export async function sendDueNotifications(
  ctx: Pick<AppContext, 'config' | 'db' | 'keyring' | 'log' | 'metrics' | 'now'>,
  sender: ChannelSender,
): Promise<number> {
  const { db, config } = ctx;
  const now = ctx.now();
  const claimUntil = new Date(now.getTime() + config.delivery.timeoutMs * 2 + 5_000);
  const claimed = await sql<NotificationRow>`
    update alert_notifications set next_attempt_at = ${claimUntil}
    where id in (
      select id from alert_notifications
      where state = 'pending' and next_attempt_at <= ${now}
      order by next_attempt_at
      limit 50
      for update skip locked)
    returning *`.execute(db);
  if (claimed.rows.length === 0) return 0;
  const channels = new Map((await allChannelRows(db)).map((row) => [row.id, row]));
  const schedule = config.alerts.retryScheduleSeconds;
  const gone = new Set<string>();
  await Promise.all(
    claimed.rows.map(async (notice) => {
      const claim = { db, id: notice.id, until: claimUntil };
      const channel = channels.get(notice.channel_id);
      if (!channel || !channel.enabled) {
        // Deleted or switched off since: nothing to send any more, and the channel counts as never
        // told, so once enabled again it hears of the alerts still firing at the next evaluation.
        await finish(claim, 'failed', notice.attempts, null, 'the channel is gone or disabled');
        gone.add(notice.channel_id);
        return;
      }
      const result = await sender.send(openChannel(ctx, channel), {
        id: notice.id,
        status: notice.status,
        alerts: notice.alerts.map(instance),
        truncatedAlerts: notice.truncated_alerts,
      });
      ctx.metrics.alertNotifications.inc({
        channel_kind: channel.kind as ChannelKind,
        outcome: result.ok ? 'sent' : 'failed',
      });
      await recordChannelAttempt(db, channel.id, { at: ctx.now().toISOString(), ...result, test: false });
      const attempts = notice.attempts + 1;
      if (result.ok) {
        await finish(claim, 'sent', attempts, null, null, ctx.now());
        return;
      }
      ctx.log.warn(
        { notificationId: notice.id, channelId: channel.id, error: result.error },
        'alert notification not taken',
      );
      const delay = schedule[attempts - 1];
      if (delay === undefined) {
        await finish(claim, 'failed', attempts, null, result.error);
      } else {
        const next = new Date(ctx.now().getTime() + delay * 1000);
        await finish(claim, 'pending', attempts, next, result.error);
      }
    }),
  );
  // Once per channel, not once per notice of it.
  if (gone.size > 0)
    await db
      .deleteFrom('alert_channel_state')
      .where('channel_id', 'in', [...gone])
      .execute();
  return claimed.rows.length;
}

/**
 * Ends an attempt, if the claim still holds: a notice superseded meanwhile, or claimed again after
 * this send outlived its claim, is left to what happened to it since.
 */
async function finish(
  claim: { db: Kysely<DB>; id: string; until: Date },
  state: NotificationRow['state'],
  attempts: number,
  nextAttemptAt: Date | null,
  lastError: string | null,
  sentAt: Date | null = null,
): Promise<void> {
  await claim.db
    .updateTable('alert_notifications')
    .set({ state, attempts, next_attempt_at: nextAttemptAt, last_error: lastError, sent_at: sentAt })
    .where('id', '=', claim.id)
    .where('state', '=', 'pending')
    .where('next_attempt_at', '=', claim.until)
    .execute();
}
