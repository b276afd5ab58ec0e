import { jsonHeaders } from '../../../outbound/headers.js';
import type { Notification } from '../notification.js';
import { groupLabels, summaryLine } from './body.js';
import { fromHttp, InvalidChannelConfig, stringArrayField, stringField, type KindSender } from './shared.js';

/**
 * `{baseUrl}/api/annotations`, whatever the base's path and trailing slashes (Grafana may be served
 * under a sub-path, e.g. `https://example.com/grafana/`). A query or fragment of the base is dropped.
 */
export function annotationsUrl(baseUrl: string): string {
  if (!URL.canParse(baseUrl)) throw new InvalidChannelConfig('invalid_config: baseUrl is not a URL');
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/api/annotations`;
  url.search = '';
  url.hash = '';
  return url.href;
}

/**
 * The annotation: a region from the start to the end of the alerts once resolved, a point while
 * they fire. Tags: the channel's, then the alert name and the status (duplicates dropped).
 */
export function annotation(notification: Notification, tags: readonly string[], now: Date) {
  const starts = notification.alerts.map((alert) => alert.startsAt.getTime());
  const time = starts.length > 0 ? Math.min(...starts) : now.getTime();
  const alertname = groupLabels(notification).alertname || 'alert';
  const body: { time: number; timeEnd?: number; tags: string[]; text: string } = {
    time,
    tags: [...new Set([...tags, alertname, notification.status])],
    text: summaryLine(notification),
  };
  if (notification.status === 'resolved') {
    const ends = notification.alerts.map((alert) => (alert.endsAt ?? now).getTime());
    body.timeEnd = ends.length > 0 ? Math.max(...ends) : now.getTime();
  }
  return body;
}

/** GRAFANA: an annotation POSTed with the service account token; any 2xx is success. */
export const sendGrafana: KindSender = async ({ deps, http }, channel, notification) => {
  const url = annotationsUrl(stringField(channel.config, 'baseUrl'));
  const token = stringField(channel.config, 'serviceAccountToken');
  const tags = stringArrayField(channel.config, 'tags');
  const body = JSON.stringify(annotation(notification, tags, deps.now()));
  const headers = { ...jsonHeaders(), authorization: `Bearer ${token}` };
  return fromHttp(await http.send({ method: 'POST', url, headers, body }));
};
