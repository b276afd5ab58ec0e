import { jsonHeaders } from '../../../connections/connector.js';
import type { Notification } from '../notification.js';
import { endedAt, sortedPairs, summaryLine, title } from './body.js';
import { failed, fromHttp, type KindSender, stringField } from './shared.js';

// Slack's limits: 3000 characters of text in a section, 50 blocks in a message.
const MAX_SECTION_TEXT = 3000;
const MAX_ALERT_BLOCKS = 20;

/** mrkdwn escaping: Slack reads `&`, `<` and `>` as markup (links, mentions), nothing else. */
const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const cut = (text: string) =>
  text.length > MAX_SECTION_TEXT ? `${text.slice(0, MAX_SECTION_TEXT - 1)}…` : text;

const section = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text: cut(text) } });

/** The Slack message: a one-line `text` (notifications, clients without blocks) and section blocks. */
export function slackMessage(notification: Notification, now: Date) {
  const alertBlocks = notification.alerts.slice(0, MAX_ALERT_BLOCKS).map((alert) => {
    const lines = [
      `*Status:* ${escape(alert.status)}`,
      `*Alert:* ${escape(alert.labels.alertname ?? 'alert')}`,
    ];
    if (alert.labels.severity) lines.push(`*Severity:* ${escape(alert.labels.severity)}`);
    if (alert.annotations.summary) lines.push(`*Summary:* ${escape(alert.annotations.summary)}`);
    if (alert.annotations.description) lines.push(`*Description:* ${escape(alert.annotations.description)}`);
    lines.push(`*Started:* ${alert.startsAt.toISOString()}`);
    const ended = endedAt(alert, now);
    if (ended) lines.push(`*Ended:* ${ended.toISOString()}`);
    const labels = sortedPairs(alert.labels).map(([name, value]) => `\`${escape(name)}=${escape(value)}\``);
    if (labels.length > 0) lines.push(`*Labels:* ${labels.join(' ')}`);
    return section(lines.join('\n'));
  });
  const more = notification.alerts.length - MAX_ALERT_BLOCKS;
  return {
    // Slack reads markup in the top-level text too (it is what notifications show).
    text: escape(summaryLine(notification)),
    blocks: [
      section(`*${escape(title(notification))}*`),
      ...alertBlocks,
      ...(more > 0 ? [section(`…and ${more} more`)] : []),
    ],
  };
}

/**
 * Slack's answer in words safe to return: its error bodies are one token (`invalid_payload`,
 * `no_service`, `channel_not_found`…); anything else (an HTML page from a proxy) is not quoted.
 */
function slackToken(body: string | undefined): string | null {
  const token = (body ?? '').trim();
  return /^[a-z_]{1,64}$/.test(token) ? token : null;
}

/** SLACK: the message POSTed to the incoming-webhook URL; only a 200 answering `ok` is success. */
export const sendSlack: KindSender = async ({ deps, http }, channel, notification) => {
  const url = stringField(channel.config, 'webhookUrl');
  const body = JSON.stringify(slackMessage(notification, deps.now()));
  const result = await http.send({ method: 'POST', url, headers: jsonHeaders(), body, keepBody: true });
  const token = slackToken(result.body);
  if (result.ok) {
    if (token === 'ok') return { ok: true, responseStatus: result.status, error: null };
    return failed(result.status, `slack_error: HTTP ${result.status} ${token ?? 'without "ok"'}`);
  }
  const outcome = fromHttp(result);
  if (result.error === 'http_status' && token) return { ...outcome, error: `${outcome.error}: ${token}` };
  return outcome;
};
