import type { AlertInstance, Notification, OpenChannel } from '../notification.js';

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

/**
 * The body WEBHOOK and HTTP channels get, in Alertmanager's webhook format so existing receivers
 * read it as they are. Nothing is grouped (`groupLabels` is empty); `groupKey` is derived from the
 * alerts' fingerprints, so the firing and the resolved notice of one alert share it, as they share
 * an Alertmanager group key.
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
  const fingerprints = notification.alerts.map((alert) => alert.fingerprint).sort();
  return {
    version: '4',
    groupKey: `{}:{fingerprint=${JSON.stringify(fingerprints.join(','))}}`,
    truncatedAlerts: 0,
    status: notification.status,
    receiver: channel.name,
    groupLabels: {},
    commonLabels: common(notification.alerts.map((alert) => alert.labels)),
    commonAnnotations: common(notification.alerts.map((alert) => alert.annotations)),
    externalURL: url,
    alerts,
  };
}

/** A label or annotation shared by every alert of the notification, else the first alert's. */
export function pick(
  notification: Notification,
  of: 'labels' | 'annotations',
  name: string,
): string | undefined {
  const shared = common(notification.alerts.map((alert) => alert[of]))[name];
  return shared ?? notification.alerts[0]?.[of][name];
}

const oneLine = (text: string, max: number) => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/**
 * `[FIRING] DeliveryFailed (tenant ten_…)`, `[RESOLVED:3] QueueBacklogHigh`: the status (with the
 * count when there are several alerts, as Alertmanager's templates do), the alert name, the tenant.
 */
export function title(notification: Notification): string {
  const count = notification.alerts.length > 1 ? `:${notification.alerts.length}` : '';
  const name = pick(notification, 'labels', 'alertname') ?? 'alert';
  const tenant = pick(notification, 'labels', 'tenantId');
  return oneLine(
    `[${notification.status.toUpperCase()}${count}] ${name}${tenant ? ` (tenant ${tenant})` : ''}`,
    200,
  );
}

/** The title and, when there is one, the `summary` annotation: one line. */
export function summaryLine(notification: Notification): string {
  const summary = pick(notification, 'annotations', 'summary');
  return oneLine(summary ? `${title(notification)}: ${summary}` : title(notification), 500);
}

/** `name=value` pairs in name order, for the text kinds (Slack, email). */
export const sortedPairs = (record: Record<string, string>): Array<[string, string]> =>
  Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** When the alert ended, for text: null while it fires. */
export const endedAt = (alert: AlertInstance, now: Date): Date | null =>
  alert.status === 'firing' ? null : (alert.endsAt ?? now);
