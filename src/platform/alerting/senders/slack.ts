import { jsonHeaders } from '../../../outbound/headers.js';
import type { Notification } from '../notification.js';
import { inline } from '../quote.js';
import { alertCount, endedAt, sortedPairs, title } from './body.js';
import { failed, fromHttp, stringField, type KindSender } from './shared.js';

// Slack's limits: 3000 characters of text in a section, 50 blocks in a message.
const MAX_SECTION_TEXT = 3000;
const MAX_ALERT_BLOCKS = 20;

const cut = (text: string) =>
  text.length > MAX_SECTION_TEXT ? `${text.slice(0, MAX_SECTION_TEXT - 1)}…` : text;

/** A section of our own words, in mrkdwn. */
const section = (text: string) => ({ type: 'section', text: { type: 'mrkdwn', text: cut(text) } });

/**
 * A section of what alerts hold (annotations quote tenant text): plain_text, where Slack reads no
 * markup at all, mrkdwn having no escape for `*bold*`, `_italic_` or `~strike~`.
 */
const dataSection = (text: string) => ({
  type: 'section',
  text: { type: 'plain_text', text: cut(text), emoji: false },
});

/**
 * The Slack message of one group: a `text` line (notifications, clients without blocks) naming
 * the group only, a heading, and a section per alert (the first 20, then how many more).
 */
export function slackMessage(notification: Notification, now: Date) {
  const alertBlocks = notification.alerts.slice(0, MAX_ALERT_BLOCKS).map((alert) => {
    const lines = [`Status: ${alert.status}`, `Alert: ${inline(alert.labels.alertname ?? 'alert')}`];
    const { severity } = alert.labels;
    const { summary, description } = alert.annotations;
    if (severity) lines.push(`Severity: ${inline(severity)}`);
    if (summary) lines.push(`Summary: ${inline(summary)}`);
    if (description) lines.push(`Description: ${inline(description)}`);
    lines.push(`Started: ${alert.startsAt.toISOString()}`);
    const ended = endedAt(alert, now);
    if (ended) lines.push(`Ended: ${ended.toISOString()}`);
    const labels = sortedPairs(alert.labels).map(([name, value]) => `${name}=${value}`);
    if (labels.length > 0) lines.push(`Labels: ${labels.join(' ')}`);
    return dataSection(lines.join('\n'));
  });
  const more = alertCount(notification) - Math.min(notification.alerts.length, MAX_ALERT_BLOCKS);
  // The title is escaped already (inline: `<`, `>` and `&` too), so Slack reads no markup in it.
  const heading = title(notification);
  return {
    text: heading,
    blocks: [section(`*${heading}*`), ...alertBlocks, ...(more > 0 ? [section(`…and ${more} more`)] : [])],
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
