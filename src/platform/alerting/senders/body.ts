import { groupLabelsOf } from '../fingerprint.js';
import type { AlertInstance, Notification, OpenChannel } from '../notification.js';
import { inline } from '../quote.js';

/** What Alertmanager sends as the `endsAt` of an alert still firing (Go's zero time). */
export const FIRING_ENDS_AT = '0001-01-01T00:00:00Z';

export interface AlertmanagerAlert {
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL: string;
  fingerprint: string;
}

/** Alertmanager's webhook payload, version 4, as hubgate fills it. */
export interface AlertmanagerBody {
  version: '4';
  groupKey: string;
  truncatedAlerts: number;
  status: 'firing' | 'resolved';
  receiver: string;
  groupLabels: Record<string, string>;
  commonLabels: Record<string, string>;
  commonAnnotations: Record<string, string>;
  externalURL: string;
  alerts: AlertmanagerAlert[];
}

/** The pairs every record holds with the same value (Alertmanager's commonLabels/commonAnnotations). */
function common(records: ReadonlyArray<Record<string, string>>): Record<string, string> {
  const [first, ...rest] = records;
  if (!first) return {};
  return Object.fromEntries(
    Object.entries(first).filter(([name, value]) => rest.every((record) => record[name] === value)),
  );
}

const externalUrl = (publicUrl: string) => publicUrl.replace(/\/+$/, '');

/** The labels a notice's alerts are grouped by: they share them (a test notice is a group of one). */
export const groupLabels = (notification: Notification): Record<string, string> =>
  groupLabelsOf(notification.alerts[0]?.labels ?? {});

/**
 * The body WEBHOOK and HTTP channels get, in Alertmanager's webhook format so existing receivers
 * read it as they are: one notice per `(alertname, tenantId)` group, `groupKey` built from the group
 * labels as Alertmanager builds it, so every notice of a group (firing, resolved) shares it.
 */
export function alertmanagerBody(
  channel: OpenChannel,
  notification: Notification,
  options: { publicUrl: string; now: Date },
): AlertmanagerBody {
  const url = externalUrl(options.publicUrl);
  const alerts = notification.alerts.map((alert): AlertmanagerAlert => ({
    status: alert.status,
    labels: alert.labels,
    annotations: alert.annotations,
    startsAt: alert.startsAt.toISOString(),
    endsAt: alert.status === 'firing' ? FIRING_ENDS_AT : (alert.endsAt ?? options.now).toISOString(),
    generatorURL: url,
    fingerprint: alert.fingerprint,
  }));
  const group = groupLabels(notification);
  const pairs = Object.keys(group)
    .sort()
    .map((name) => `${name}=${JSON.stringify(group[name])}`);
  return {
    version: '4',
    groupKey: `{}:{${pairs.join(', ')}}`,
    truncatedAlerts: notification.truncatedAlerts ?? 0,
    status: notification.status,
    receiver: channel.name,
    groupLabels: group,
    commonLabels: common(notification.alerts.map((alert) => alert.labels)),
    commonAnnotations: common(notification.alerts.map((alert) => alert.annotations)),
    externalURL: url,
    alerts,
  };
}

/** A label or annotation every alert of the notification holds with the same value. */
function shared(notification: Notification, of: 'labels' | 'annotations', name: string): string | undefined {
  return common(notification.alerts.map((alert) => alert[of]))[name];
}

// Values are escaped, then cut: a notice's lines are ours, whatever the alerts hold.
const oneLine = (text: string, max: number) => {
  const line = inline(text);
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/** How many alerts the notice is about, those it had no room to list included. */
export const alertCount = (notification: Notification): number =>
  notification.alerts.length + (notification.truncatedAlerts ?? 0);

/**
 * `[FIRING] DeliveryFailed (tenant ten_…)`, `[RESOLVED:3] QueueBacklogHigh`: the status (with the
 * count when there are several alerts, as Alertmanager's templates do), the group: the alert name,
 * the tenant. Nothing a tenant wrote: this is the subject and the notification line.
 */
export function title(notification: Notification): string {
  const count = alertCount(notification) > 1 ? `:${alertCount(notification)}` : '';
  const { alertname, tenantId } = groupLabels(notification);
  return oneLine(
    `[${notification.status.toUpperCase()}${count}] ${alertname || 'alert'}${tenantId ? ` (tenant ${tenantId})` : ''}`,
    200,
  );
}

/** The title and, when every alert has the same one, the `summary` annotation: one line. */
export function summaryLine(notification: Notification): string {
  const summary = shared(notification, 'annotations', 'summary');
  return oneLine(summary ? `${title(notification)}: ${summary}` : title(notification), 500);
}

/** `name=value` pairs in name order, each on one line, for the text kinds (Slack, email). */
export const sortedPairs = (record: Record<string, string>): Array<[string, string]> =>
  Object.entries(record)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => [inline(name), inline(value)]);

/** When the alert ended, for text: null while it fires. */
export const endedAt = (alert: AlertInstance, now: Date): Date | null =>
  alert.status === 'firing' ? null : (alert.endsAt ?? now);
