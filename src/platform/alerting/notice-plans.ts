import type { AlertStatus } from '../../db/schema.js';
import { groupKeyOf } from './fingerprint.js';
import type { AlertInstance } from './notification.js';

/** What a channel is to be told of one group: the alerts, firing first (queued by outbox.ts). */
export interface GroupNotice {
  groupKey: string;
  channelId: string;
  alerts: AlertInstance[];
}

/** What a channel was last told of an alert, and when. */
export type ChannelState = { status: AlertStatus; at: Date };

/** New firing alerts held back at an evaluation, by group and channel: which, and since when. */
export type Waiting = Map<string, { news: string; since: number }>;

// Alertmanager's default group_wait: however long a burst goes on, its first notice is not later.
const MAX_WAIT_MS = 30_000;

interface NoticePlan {
  groupKey: string;
  channelId: string;
  firing: AlertInstance[];
  resolved: AlertInstance[];
  /** Fingerprints of the firing alerts the channel has not heard fire. */
  news: string[];
  /** The shortest repeat interval of the routes that brought the firing alerts here. */
  repeatMs: number;
  /** When the channel last heard of the group (its firing alerts are told together). */
  toldAt: number;
}

const byStart = (a: AlertInstance, b: AlertInstance) =>
  a.startsAt.getTime() - b.startsAt.getTime() || (a.fingerprint < b.fingerprint ? -1 : 1);

/**
 * One evaluation's notices: at most one per channel and `(alertname, tenantId)` group
 * (docs/api/limits.md), as Alertmanager's group_by. A group is told again when, for that channel:
 * - an alert it heard fire resolved: at once (resolved is recorded now, and heard last);
 * - the repeat interval passed since it last heard of the group;
 * - alerts fire it has not heard: once an evaluation finds the same new alerts as the one before
 *   (at most 30 s after the first), so failures arriving over a few evaluations are one notice.
 * The notice lists every alert of the group firing there, then those that resolved.
 */
export class NoticePlans {
  private readonly plans = new Map<string, NoticePlan>();

  private plan(labels: Record<string, string>, channelId: string): NoticePlan {
    const groupKey = groupKeyOf(labels);
    const key = JSON.stringify([groupKey, channelId]);
    let plan = this.plans.get(key);
    if (!plan) {
      plan = { groupKey, channelId, firing: [], resolved: [], news: [], repeatMs: Infinity, toldAt: 0 };
      this.plans.set(key, plan);
    }
    return plan;
  }

  firing(
    alert: AlertInstance,
    route: { channelId: string; repeatIntervalSeconds: number },
    told: ReadonlyMap<string, ChannelState> | undefined,
  ): void {
    const plan = this.plan(alert.labels, route.channelId);
    plan.firing.push(alert);
    plan.repeatMs = Math.min(plan.repeatMs, route.repeatIntervalSeconds * 1000);
    const state = told?.get(route.channelId);
    if (!state || state.status === 'resolved') plan.news.push(alert.fingerprint);
    else plan.toldAt = Math.max(plan.toldAt, state.at.getTime());
  }

  resolved(alert: AlertInstance, channelId: string): void {
    this.plan(alert.labels, channelId).resolved.push(alert);
  }

  /** The notices due now, and what waits for the next evaluation (pass it in then). */
  due(now: Date, before: Waiting): { notices: GroupNotice[]; waiting: Waiting } {
    const at = now.getTime();
    const notices: GroupNotice[] = [];
    const waiting: Waiting = new Map();
    for (const [key, plan] of this.plans) {
      const told = plan.firing.length > plan.news.length;
      let due = plan.resolved.length > 0 || (told && at - plan.toldAt >= plan.repeatMs);
      if (!due && plan.news.length > 0) {
        const news = plan.news.sort().join(',');
        const previous = before.get(key);
        due = previous !== undefined && (previous.news === news || at - previous.since >= MAX_WAIT_MS);
        if (!due) waiting.set(key, { news, since: previous?.since ?? at });
      }
      if (!due) continue;
      notices.push({
        groupKey: plan.groupKey,
        channelId: plan.channelId,
        alerts: [...plan.firing.sort(byStart), ...plan.resolved.sort(byStart)],
      });
    }
    return { notices, waiting };
  }
}
