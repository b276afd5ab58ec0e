import type { ChannelRow } from './channel-store.js';
import { DATABASE_UNAVAILABLE, type Condition } from './conditions.js';
import { fingerprintOf } from './fingerprint.js';
import { NoticePlans, type ChannelState, type GroupNotice, type Waiting } from './notice-plans.js';
import type { AlertInstance } from './notification.js';
import { routeAlert, type RoutingDocument } from './rules.js';

// The alert engine's decisions, apart from the reads that feed them and the writes that follow: pure
// functions of what the database said, so each can be tested alone.

/** A recorded firing alert, as the engine reads it back. */
export interface RecordedFiring {
  fingerprint: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  starts_at: Date | string;
}

/** What one evaluation finds: the alerts firing (and what to record of each), those that resolved. */
export interface Evaluation {
  /** `start`: record it firing from now; `describe`: its annotations changed; null: nothing to record. */
  firing: Array<{ alert: AlertInstance; record: 'start' | 'describe' | null }>;
  resolved: AlertInstance[];
}

const sameStrings = (a: Record<string, string>, b: Record<string, string>): boolean =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

/**
 * Decides, from the conditions that hold now and the alerts recorded as firing, which alerts fire
 * (new, firing again, or still firing, perhaps with a new description) and which resolved. The same
 * labels are the same alert: conditions that share them count once, the last one's annotations kept.
 */
export function decideAlerts(conditions: Condition[], recorded: RecordedFiring[], now: Date): Evaluation {
  const holding = new Map(conditions.map((condition) => [fingerprintOf(condition.labels), condition]));
  const wasFiring = new Map(recorded.map((row) => [row.fingerprint, row]));
  const firing: Evaluation['firing'] = [];
  for (const [fingerprint, condition] of holding) {
    const before = wasFiring.get(fingerprint);
    const startsAt = before ? new Date(before.starts_at) : now;
    const record = !before
      ? 'start'
      : sameStrings(before.annotations, condition.annotations)
        ? null
        : 'describe';
    firing.push({ alert: { fingerprint, ...condition, status: 'firing', startsAt, endsAt: null }, record });
  }
  const resolved = recorded
    .filter((row) => !holding.has(row.fingerprint))
    .map((row): AlertInstance => ({
      fingerprint: row.fingerprint,
      labels: row.labels,
      annotations: row.annotations,
      status: 'resolved',
      startsAt: new Date(row.starts_at),
      endsAt: now,
    }));
  return { firing, resolved };
}

/** Every alert an evaluation concerns, firing or resolved: whose told states it needs. */
export const concernedFingerprints = (evaluation: Evaluation): string[] => [
  ...new Set([
    ...evaluation.firing.map(({ alert }) => alert.fingerprint),
    ...evaluation.resolved.map((a) => a.fingerprint),
  ]),
];

/** What the notice planner needs besides the evaluation. */
export interface PlanningInput {
  doc: RoutingDocument;
  channels: readonly Pick<ChannelRow, 'id' | 'enabled'>[];
  /** What each channel was last told, by fingerprint then channel. */
  told: ReadonlyMap<string, ReadonlyMap<string, ChannelState>>;
  /** What waited at the evaluation before (see NoticePlans). */
  waiting: Waiting;
  now: Date;
}

export interface PlannedNotices {
  notices: GroupNotice[];
  /** What waits for the next evaluation. */
  waiting: Waiting;
  /** Channels disabled since they heard an alert fire that has now resolved: they count as never told. */
  forget: Array<{ fingerprint: string; channelId: string }>;
}

/**
 * The notices an evaluation calls for (NoticePlans): firing alerts go to the enabled channels their
 * routes name; a resolved alert goes to the enabled channels told it was firing (Alertmanager's
 * send_resolved). A channel disabled meanwhile hears nothing now, and forgets it was told.
 */
export function planNotices(evaluation: Evaluation, input: PlanningInput): PlannedNotices {
  const enabled = new Set(input.channels.filter((c) => c.enabled).map((c) => c.id));
  const plans = new NoticePlans();
  for (const { alert } of evaluation.firing) {
    for (const route of routeAlert(alert.labels, input.doc)) {
      if (enabled.has(route.channelId)) plans.firing(alert, route, input.told.get(alert.fingerprint));
    }
  }
  const forget: PlannedNotices['forget'] = [];
  for (const alert of evaluation.resolved) {
    for (const [channelId, state] of input.told.get(alert.fingerprint) ?? []) {
      if (state.status !== 'firing') continue;
      if (enabled.has(channelId)) plans.resolved(alert, channelId);
      else forget.push({ fingerprint: alert.fingerprint, channelId });
    }
  }
  const { notices, waiting } = plans.due(input.now, input.waiting);
  return { notices, waiting, forget };
}

/** DatabaseUnavailable as channels see it: firing since the outage began, or resolved when it ended. */
export function outageAlert(since: Date, endedAt: Date | null = null): AlertInstance {
  const { labels, annotations } = DATABASE_UNAVAILABLE;
  const status = endedAt ? 'resolved' : 'firing';
  return {
    fingerprint: fingerprintOf(labels),
    labels,
    annotations,
    status,
    startsAt: since,
    endsAt: endedAt,
  };
}

/**
 * The channels to tell of a database outage now, from the routing and channels last read: the
 * enabled channels DatabaseUnavailable routes to, unless told within their repeat interval.
 */
export function outageChannelsDue<C extends Pick<ChannelRow, 'id' | 'enabled'>>(
  lastRead: { doc: RoutingDocument; channels: readonly C[] },
  notified: ReadonlyMap<string, Date>,
  now: Date,
): C[] {
  const due: C[] = [];
  for (const route of routeAlert(DATABASE_UNAVAILABLE.labels, lastRead.doc)) {
    const channel = lastRead.channels.find((c) => c.id === route.channelId && c.enabled);
    const last = notified.get(route.channelId);
    if (!channel || (last && now.getTime() - last.getTime() < route.repeatIntervalSeconds * 1000)) continue;
    due.push(channel);
  }
  return due;
}
