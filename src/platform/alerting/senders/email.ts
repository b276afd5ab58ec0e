import { createTransport } from 'nodemailer';
import { within } from '../../../deadline.js';
import { classify, resolveChecked, type Resolver } from '../../../outbound/sender.js';
import { checkHost, type DestinationPolicy } from '../../../outbound/ssrf-policy.js';
import { VERSION } from '../../../version.js';
import type { ChannelSendResult, Notification } from '../notification.js';
import { endedAt, sortedPairs, title } from './body.js';
import {
  failed,
  InvalidChannelConfig,
  optionalStringField,
  redact,
  secretValues,
  stringArrayField,
  stringField,
  type KindSender,
} from './shared.js';

/**
 * Where to connect for `smtpHost`, under the SSRF policy of docs/api/connections.md as HTTP destinations are: an
 * address literal is checked; a name must not be a local one, is resolved here, every answer is
 * checked, and the connection goes to the first (pinned: nodemailer does no DNS of its own). The
 * name, when there is one, is kept for TLS so the certificate is still checked against it.
 */
export async function smtpDestination(
  smtpHost: string,
  policy: DestinationPolicy,
  resolve: Resolver | undefined,
): Promise<{ address: string; servername: string | null } | { error: string }> {
  const verdict = checkHost(smtpHost, policy);
  if (!verdict.allowed && verdict.code === 'validation_failed') {
    throw new InvalidChannelConfig('invalid_config: smtpHost is not a host name or address');
  }
  if (!verdict.allowed) return { error: `${verdict.code}: ${verdict.message}` };
  if (verdict.address) return { address: verdict.address, servername: null };
  // Lower-cased and IDNA-encoded by URL parsing; a trailing dot would not match a certificate.
  const name = verdict.url.hostname.replace(/\.+$/, '');
  try {
    const chosen = await resolveChecked(name, policy.allowedCidrs, resolve);
    return { address: chosen.address, servername: name };
  } catch (error) {
    const { error: code, detail } = classify(error);
    return { error: `${code}: ${detail}` };
  }
}

/**
 * The mail's text (no HTML part): what happened, then each alert's times, labels and annotations,
 * every value on its one line.
 */
export function emailText(notification: Notification, now: Date, publicUrl: string): string {
  const lines = [title(notification), ''];
  notification.alerts.forEach((alert, index) => {
    lines.push(`Alert ${index + 1} of ${notification.alerts.length}: ${alert.status}`);
    lines.push(`  Started: ${alert.startsAt.toISOString()}`);
    const ended = endedAt(alert, now);
    if (ended) lines.push(`  Ended: ${ended.toISOString()}`);
    lines.push('  Labels:');
    for (const [name, value] of sortedPairs(alert.labels)) lines.push(`    ${name} = ${value}`);
    if (Object.keys(alert.annotations).length > 0) {
      lines.push('  Annotations:');
      for (const [name, value] of sortedPairs(alert.annotations)) lines.push(`    ${name} = ${value}`);
    }
    lines.push('');
  });
  const more = notification.truncatedAlerts ?? 0;
  if (more > 0) lines.push(`And ${more} more alerts of this group, not listed.`, '');
  lines.push(`Sent by hubgate ${VERSION} (${publicUrl.replace(/\/+$/, '')})`);
  return `${lines.join('\n')}\n`;
}

/**
 * A server's reply in a few safe words: `550 5.1.1 Mailbox unavailable` → `mailbox unavailable`.
 * Secrets are cut out first, while the reply is as the server wrote it (a server may echo a user
 * name or worse), then only plain characters are kept.
 */
function replyPhrase(response: string | undefined, secrets: readonly string[]): string {
  const text = redact(response ?? '', secrets)
    .replace(/^\d{3}[ -]?/, '')
    .replace(/^\d\.\d{1,3}\.\d{1,3}\s*/, '')
    .toLowerCase()
    .replace(/[^a-z0-9 .,:'()[\]-]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (text === '') return 'rejected';
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

interface SmtpFailure {
  code?: string;
  originalCode?: string;
  responseCode?: number;
  response?: string;
}

// The codes Node's TLS layer gives a failed handshake or certificate check.
const TLS_CODE = /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/;

/** nodemailer's error in the words of docs/api/events.md where they fit, else `smtp <code>: <reply>`. */
export function fromSmtpError(error: unknown, secrets: readonly string[]): ChannelSendResult {
  const e = (error ?? {}) as SmtpFailure;
  const status = typeof e.responseCode === 'number' ? e.responseCode : null;
  const cause = e.originalCode && /^[A-Z0-9_]{1,64}$/.test(e.originalCode) ? e.originalCode : null;
  if (e.code === 'ETIMEDOUT') return failed(status, 'timeout: no complete answer within DELIVERY_TIMEOUT_MS');
  if (e.code === 'ETLS' || (cause && TLS_CODE.test(cause))) {
    if (status !== null) return failed(status, `tls_error: STARTTLS refused (smtp ${status})`);
    return failed(null, `tls_error: ${cause ?? 'TLS failed'}`);
  }
  if (status !== null) return failed(status, `smtp ${status}: ${replyPhrase(e.response, secrets)}`);
  if (e.code === 'ESOCKET' || e.code === 'ECONNECTION') {
    return failed(null, `connection_error: ${cause ?? 'the connection failed'}`);
  }
  if (e.code === 'EAUTH') return failed(null, 'auth_error: the server does not accept the credentials');
  return failed(null, `smtp_error: ${e.code ?? 'the send failed'}`);
}

const SMTP_REPLY = /^(\d{3})\b/;

/**
 * EMAIL: one message over SMTP to the checked address of `smtpHost`. Port 465 is implicit TLS;
 * any other port uses STARTTLS, required unless the policy allows plain HTTP (the same switch
 * allows plaintext SMTP, so without it a password is never sent in clear).
 */
export const sendEmail: KindSender = async ({ deps }, channel, notification) => {
  const { config } = channel;
  const to = stringArrayField(config, 'to');
  const from = stringField(config, 'from');
  const smtpHost = stringField(config, 'smtpHost');
  const port = config.smtpPort;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new InvalidChannelConfig('invalid_config: smtpPort must be a port number');
  }
  const password = optionalStringField(config, 'smtpPassword');
  const user = optionalStringField(config, 'smtpUser') ?? from;

  const destination = await smtpDestination(smtpHost, deps.policy, deps.resolve);
  if ('error' in destination) return failed(null, destination.error);

  const implicitTls = port === 465;
  const transport = createTransport({
    host: destination.address,
    port,
    secure: implicitTls,
    requireTLS: !implicitTls && !deps.policy.allowHttp,
    ...(password ? { auth: { user, pass: password } } : {}),
    tls: destination.servername ? { servername: destination.servername } : {},
    connectionTimeout: deps.timeoutMs,
    greetingTimeout: deps.timeoutMs,
    socketTimeout: deps.timeoutMs,
    dnsTimeout: deps.timeoutMs,
    logger: false,
    debug: false,
  });
  try {
    // nodemailer's timeouts are per step and per idle socket; a server answering slowly at every step
    // could hold a send far longer. The whole send gets one deadline, as an HTTP send does.
    const info = await within(
      transport.sendMail({
        from,
        to,
        subject: title(notification),
        text: emailText(notification, deps.now(), deps.publicUrl),
        headers: { 'X-Hubgate-Channel': channel.id },
        disableFileAccess: true,
        disableUrlAccess: true,
      }),
      deps.timeoutMs,
      'the SMTP send',
    );
    const code = SMTP_REPLY.exec(info.response ?? '')?.[1];
    return { ok: true, responseStatus: code ? Number(code) : null, error: null };
  } catch (error) {
    return fromSmtpError(error, secretValues(channel));
  } finally {
    transport.close();
  }
};
