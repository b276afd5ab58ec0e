import { createTransport } from 'nodemailer';
import type { Logger } from 'pino';
import type { MailConfig } from '../config.js';
import type { Role } from '../db/schema.js';
import { within } from '../deadline.js';
import { VERSION } from '../version.js';

/** What an invitation e-mail says; `url` holds the token and goes nowhere but into the message. */
export interface InvitationMail {
  userId: string;
  to: string;
  tenantName: string;
  role: Role;
  invitedBy: string;
  url: string;
  expiresAt: Date;
}

export interface InvitationMailer {
  /**
   * Sends in the background: the invitation is made and answered whatever the mail server does
   * (the link is in the answer). A failure is logged, without the link.
   */
  send(mail: InvitationMail): void;
  /** Waits for the sends under way (the app's close). */
  close(): Promise<void>;
}

const ROLE_WORDS: Record<Role, string> = {
  COMPANY_IT_ADMIN: 'an IT administrator',
  EXECUTIVE: 'an executive',
  PLATFORM_ADMIN: 'a platform administrator',
  MEMBER: 'a member',
};

/** Tenant text on one line of plain characters: a name is not a place for headers or controls. */
const oneLine = (text: string, max: number): string => {
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  const plain = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim();
  return plain.length > max ? `${plain.slice(0, max - 1)}…` : plain;
};

export function invitationText(mail: InvitationMail): { subject: string; text: string } {
  const tenant = oneLine(mail.tenantName, 200);
  const subject = `You are invited to ${oneLine(mail.tenantName, 80)} on hubgate`;
  const text = [
    `${mail.invitedBy} invited you to ${tenant} on hubgate, as ${ROLE_WORDS[mail.role]}.`,
    '',
    'Open this link to accept and choose your password:',
    mail.url,
    '',
    `The link works once, until ${mail.expiresAt.toISOString()}. If you did not expect this`,
    'invitation, ignore this e-mail: nothing happens unless the link is opened.',
    '',
    `Sent by hubgate ${VERSION}`,
  ].join('\n');
  return { subject, text: `${text}\n` };
}

/** The transport options an `smtp://` or `smtps://` URL says, read by the WHATWG parser. */
function transportOptions(smtpUrl: string, timeoutMs: number) {
  const url = new URL(smtpUrl);
  const secure = url.protocol === 'smtps:';
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? (secure ? 465 : 587) : Number(url.port),
    secure,
    ...(user !== '' || pass !== '' ? { auth: { user, pass } } : {}),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    dnsTimeout: timeoutMs,
    logger: false,
    debug: false,
  };
}

interface SmtpFailure {
  code?: unknown;
  responseCode?: unknown;
  command?: unknown;
}

/**
 * What a log line may say of a failed send: nodemailer's code, the server's reply code and the
 * SMTP command. Not the message: a server may echo what it was sent, and that holds the link.
 */
function failureFields(error: unknown): Record<string, unknown> {
  const e = (error ?? {}) as SmtpFailure;
  const word = (value: unknown) =>
    typeof value === 'string' && /^[A-Za-z0-9_ ]{1,32}$/.test(value) ? value : undefined;
  return {
    code: word(e.code),
    responseCode: typeof e.responseCode === 'number' ? e.responseCode : undefined,
    command: word(e.command),
  };
}

/**
 * Invitations by e-mail through `SMTP_URL`, when it is set; otherwise sends nothing (the link in
 * the answer is the invitation). The SMTP URL holds credentials and the mail holds the token:
 * neither is ever logged.
 */
export function createInvitationMailer(
  mail: MailConfig | null,
  log: Logger,
  timeoutMs: number,
): InvitationMailer {
  const pending = new Set<Promise<void>>();
  if (!mail) return { send: () => {}, close: async () => {} };
  const options = transportOptions(mail.smtpUrl, timeoutMs);

  async function deliver(message: InvitationMail): Promise<void> {
    const transport = createTransport(options);
    const { subject, text } = invitationText(message);
    try {
      // nodemailer's timeouts are per step; the whole send gets one deadline on top.
      await within(
        transport.sendMail({
          from: mail?.from,
          to: message.to,
          subject,
          text,
          disableFileAccess: true,
          disableUrlAccess: true,
        }),
        timeoutMs * 2,
        'the invitation e-mail',
      );
      log.info({ userId: message.userId }, 'invitation e-mail sent');
    } catch (error) {
      log.warn({ userId: message.userId, err: failureFields(error) }, 'invitation e-mail not sent');
    } finally {
      transport.close();
    }
  }

  return {
    send(message) {
      const sending = deliver(message).finally(() => pending.delete(sending));
      pending.add(sending);
    },
    async close() {
      await Promise.all(pending);
    },
  };
}
