import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { startSmtp } from '../../helpers/smtp.js';
import {
  channel,
  channelSender,
  fakeResolver,
  firing,
  group,
  policy,
  resolved,
  tripwire,
} from './senders-fixtures.js';

const sender = channelSender();
after(() => sender.close());

const PASSWORD = 'SmtpPassw0rd-Secret!';

const emailChannel = (port: number, extra: Record<string, unknown> = {}) =>
  channel('EMAIL', {
    to: ['oncall@example.test', 'lead@example.test'],
    from: 'alerts@hub.example.test',
    smtpHost: '127.0.0.1',
    smtpPort: port,
    smtpPassword: PASSWORD,
    ...extra,
  });

/** The headers and the body of a raw message (7bit text, as nodemailer writes short ASCII mail). */
function parse(raw: string) {
  const split = raw.indexOf('\r\n\r\n');
  const headers = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(headers)?.[1];
  return { header, body: raw.slice(split + 4).replace(/\r\n/g, '\n') };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('EMAIL channel', () => {
  test('sends one message, logged in as `from`, with the subject and a text body of labels and annotations', async (t) => {
    const smtp = await startSmtp();
    t.after(() => smtp.close());
    assert.deepEqual(
      await sender.send(emailChannel(smtp.port), firing),
      {
        ok: true,
        responseStatus: 250,
        error: null,
      },
      "the alert e-mail is not reported sent with the server's 250",
    );
    assert.deepEqual(
      smtp.logins,
      [{ username: 'alerts@hub.example.test', password: PASSWORD }],
      'the sender did not log in once as the from address with the password',
    );
    assert.equal(smtp.mails.length, 1, 'the server did not get exactly one message');
    const [mail] = smtp.mails;
    assert.ok(mail, 'a message arrived');
    assert.equal(mail.from, 'alerts@hub.example.test', 'the envelope sender is not the from address');
    assert.deepEqual(
      mail.to,
      ['oncall@example.test', 'lead@example.test'],
      'the message did not go to both recipients',
    );
    const { header, body } = parse(mail.raw);
    assert.equal(
      header('Subject'),
      '[FIRING] DeliveryFailed (tenant ten_abc)',
      'the subject does not say FIRING, the alert and the tenant',
    );
    assert.equal(header('From'), 'alerts@hub.example.test', 'the From header is not the from address');
    assert.equal(
      header('To'),
      'oncall@example.test, lead@example.test',
      'the To header does not list both recipients',
    );
    assert.equal(
      header('X-Hubgate-Channel'),
      'chn_0123456789012345678901',
      'the message does not name its channel',
    );
    assert.match(header('Content-Type') ?? '', /^text\/plain/, 'the message is not plain text');
    assert.equal(
      body,
      [
        '[FIRING] DeliveryFailed (tenant ten_abc)',
        '',
        'Alert 1 of 1: firing',
        '  Started: 2025-01-02T03:04:05.000Z',
        '  Labels:',
        '    alertname = DeliveryFailed',
        '    severity = critical',
        '    tenantId = ten_abc',
        '  Annotations:',
        '    description = HTTP 500 from the receiver',
        '    summary = Delivery dlv_1 failed after 8 attempts',
        '',
        body.split('\n').at(-2),
        '',
      ].join('\n'),
      'the message body does not list the labels and annotations as expected',
    );
    assert.match(
      body.split('\n').at(-2) ?? '',
      /^Sent by hubgate \S+ \(https:\/\/hub\.example\.test\)$/,
      'the message does not end with the hubgate signature and public URL',
    );
    assert.ok(!mail.raw.includes(PASSWORD), 'the password is not in the message');
  });

  test('logs in as smtpUser when set; a resolved notice says so and when it ended', async (t) => {
    const smtp = await startSmtp();
    t.after(() => smtp.close());
    const result = await sender.send(emailChannel(smtp.port, { smtpUser: 'relay-user' }), resolved);
    assert.equal(result.ok, true, 'the resolved notice is not reported sent');
    assert.deepEqual(
      smtp.logins,
      [{ username: 'relay-user', password: PASSWORD }],
      'the sender did not log in as smtpUser',
    );
    const { header, body } = parse(smtp.mails[0]?.raw ?? '');
    assert.equal(
      header('Subject'),
      '[RESOLVED] DeliveryFailed (tenant ten_abc)',
      'the subject does not say RESOLVED',
    );
    assert.match(
      body,
      /^ {2}Ended: 2025-01-02T03:14:05\.000Z$/m,
      'the resolved message does not say when the alert ended',
    );
  });

  test('a group is one message: counted in the subject, every alert listed, the rest counted', async (t) => {
    const smtp = await startSmtp();
    t.after(() => smtp.close());
    assert.equal(
      (await sender.send(emailChannel(smtp.port), group)).ok,
      true,
      'the group message is not reported sent',
    );
    assert.equal(smtp.mails.length, 1, 'a group was sent as more than one message');
    const { header, body } = parse(smtp.mails[0]?.raw ?? '');
    assert.equal(
      header('Subject'),
      '[FIRING:30] DeliveryFailed (tenant ten_abc)',
      "the subject does not count the group's 30 alerts",
    );
    assert.equal(
      body.match(/^Alert \d+ of 25: firing$/gm)?.length,
      25,
      'the group message does not list 25 alerts',
    );
    assert.match(body, /^ {4}connectionId = con_24$/m, 'the group message does not list the 25th alert');
    assert.match(
      body,
      /^And 5 more alerts of this group, not listed\.$/m,
      'the group message does not count the 5 alerts not listed',
    );
  });

  test('without a password nothing logs in', async (t) => {
    const smtp = await startSmtp();
    t.after(() => smtp.close());
    const result = await sender.send(emailChannel(smtp.port, { smtpPassword: undefined }), firing);
    assert.deepEqual(
      result,
      { ok: true, responseStatus: 250, error: null },
      'a message without a password is not reported sent',
    );
    assert.deepEqual(smtp.logins, [], 'the sender logged in without a password');
    assert.equal(smtp.mails.length, 1, 'the server did not get the message sent without a password');
  });

  test('a recipient refused with 550 is a failure with that code', async (t) => {
    const smtp = await startSmtp({
      onRcptTo(_address, _session, callback) {
        callback(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }));
      },
    });
    t.after(() => smtp.close());
    assert.deepEqual(
      await sender.send(emailChannel(smtp.port), firing),
      {
        ok: false,
        responseStatus: 550,
        error: 'smtp 550: mailbox unavailable',
      },
      'a recipient refused with 550 is not reported as that failure',
    );
    assert.equal(smtp.mails.length, 0, 'a message was accepted though its recipient was refused');
  });

  test('refused credentials are a failure, and the error never quotes the password (even echoed)', async (t) => {
    const smtp = await startSmtp({
      onAuth(auth, _session, callback) {
        callback(new Error(`Invalid login ${auth.username} with ${auth.password ?? ''}`));
      },
    });
    t.after(() => smtp.close());
    const result = await sender.send(emailChannel(smtp.port), firing);
    assert.equal(result.ok, false, 'refused credentials are reported as success');
    assert.equal(result.responseStatus, 535, 'refused credentials are not reported with code 535');
    assert.match(
      result.error ?? '',
      /^smtp 535: /,
      'the error for refused credentials does not start with the SMTP code',
    );
    assert.ok(!(result.error ?? '').includes(PASSWORD), result.error ?? '');
    assert.ok(!(result.error ?? '').toLowerCase().includes(PASSWORD.toLowerCase()), result.error ?? '');
    assert.equal(smtp.mails.length, 0, 'a message was accepted though the login was refused');
  });

  test('nothing listening is a connection error', async () => {
    const port = await closedPort();
    assert.deepEqual(
      await sender.send(emailChannel(port), firing),
      {
        ok: false,
        responseStatus: null,
        error: 'connection_error: ECONNREFUSED',
      },
      'nothing listening is not reported as a refused connection',
    );
  });

  test('unless plain HTTP is allowed, STARTTLS is required: a server without it gets no password', async (t) => {
    const smtp = await startSmtp();
    const strict = channelSender({ policy: { ...policy, allowHttp: false } });
    t.after(() => strict.close());
    t.after(() => smtp.close());
    const result = await strict.send(emailChannel(smtp.port), firing);
    assert.deepEqual(
      result,
      {
        ok: false,
        responseStatus: 500,
        error: 'tls_error: STARTTLS refused (smtp 500)',
      },
      'a server without STARTTLS is not refused as a TLS error',
    );
    assert.equal(smtp.connections(), 1, 'the sender connected more than once to a server without STARTTLS');
    assert.deepEqual(smtp.logins, [], 'the password was sent to a server without STARTTLS');
    assert.equal(smtp.mails.length, 0, 'a message was sent to a server without STARTTLS');
  });

  test('a STARTTLS certificate that does not verify is a TLS failure, before any login', async (t) => {
    // smtp-server's built-in self-signed certificate.
    const smtp = await startSmtp({ disabledCommands: [] });
    t.after(() => smtp.close());
    const result = await sender.send(emailChannel(smtp.port), firing);
    assert.equal(result.ok, false, 'a certificate that does not verify is reported as success');
    assert.equal(result.responseStatus, null, 'a TLS failure reports an SMTP status');
    // Which check fails depends on the certificate (expired, self-signed, wrong name): any does.
    assert.match(
      result.error ?? '',
      /^tls_error: [A-Z_]+$/,
      'a certificate that does not verify is not reported as a TLS error',
    );
    assert.deepEqual(smtp.logins, [], 'the password was sent over an unverified TLS connection');
    assert.equal(smtp.mails.length, 0, 'a message was sent over an unverified TLS connection');
  });

  test('a name is resolved once and the connection goes to the checked address', async (t) => {
    const smtp = await startSmtp();
    const dns = fakeResolver('127.0.0.1');
    const pinned = channelSender({ resolve: dns.resolve });
    t.after(() => pinned.close());
    t.after(() => smtp.close());
    const result = await pinned.send(emailChannel(smtp.port, { smtpHost: 'Mail.Example.Test' }), firing);
    assert.deepEqual(
      result,
      { ok: true, responseStatus: 250, error: null },
      'a message to a resolved name is not reported sent',
    );
    assert.deepEqual(
      dns.asked,
      ['mail.example.test'],
      'the name was not looked up exactly once, lower-cased',
    );
    assert.equal(smtp.mails.length, 1, 'the message did not reach the checked address');
  });
});

describe('EMAIL channel SSRF policy', () => {
  test('a refused address literal is never connected to', async (t) => {
    for (const [host, listen, range] of [
      ['127.0.0.2', '127.0.0.2', 'loopback (127.0.0.0/8)'],
      ['::1', '::1', 'loopback (::1/128)'],
      ['[::1]', '::1', 'loopback (::1/128)'],
    ] as const) {
      const wire = await tripwire(listen);
      t.after(() => wire.close());
      assert.deepEqual(
        await sender.send(emailChannel(wire.port, { smtpHost: host }), firing),
        {
          ok: false,
          responseStatus: null,
          error: `destination_forbidden: address ${listen} is in a refused range: ${range}`,
        },
        `${host}: a refused address literal is not refused by the destination policy`,
      );
      assert.equal(wire.hits(), 0, `${host}: the refused address was connected to`);
    }
  });

  test('local names are refused without a lookup', async (t) => {
    const dns = fakeResolver('127.0.0.1');
    const guarded = channelSender({ resolve: dns.resolve });
    t.after(() => guarded.close());
    for (const name of ['localhost', 'smtp.localhost', 'metadata.google.internal', 'mail.corp.internal']) {
      assert.deepEqual(
        await guarded.send(emailChannel(25, { smtpHost: name }), firing),
        {
          ok: false,
          responseStatus: null,
          error: `destination_forbidden: host ${name} is not allowed (local name)`,
        },
        `${name}: a local name is not refused by the destination policy`,
      );
    }
    // Other IPv4 notations are the address they stand for.
    assert.deepEqual(
      await guarded.send(emailChannel(25, { smtpHost: '2130706434' }), firing),
      {
        ok: false,
        responseStatus: null,
        error: 'destination_forbidden: address 127.0.0.2 is in a refused range: loopback (127.0.0.0/8)',
      },
      'a decimal loopback address is not refused as 127.0.0.2',
    );
    assert.deepEqual(dns.asked, [], 'a local name or address literal was looked up');
  });

  test('a name resolving to a refused address is refused, whichever answer it is', async (t) => {
    const wire = await tripwire('127.0.0.2');
    t.after(() => wire.close());
    for (const answers of [['127.0.0.2'], ['127.0.0.1', '127.0.0.2'], ['::ffff:127.0.0.2']]) {
      const asked: string[] = [];
      const guarded = channelSender({
        resolve: async (hostname) => {
          asked.push(hostname);
          return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
        },
      });
      try {
        const result = await guarded.send(emailChannel(wire.port, { smtpHost: 'mail.example.test' }), firing);
        assert.equal(
          result.ok,
          false,
          `${answers.join()}: a name resolving to a refused address is reported sent`,
        );
        assert.equal(
          result.responseStatus,
          null,
          `${answers.join()}: a refusal before connecting reports an SMTP status`,
        );
        assert.match(
          result.error ?? '',
          /^destination_forbidden: mail\.example\.test resolves to \S*127\.0\.0\.2, in a refused range: /,
          `${answers.join()}: the refusal does not name the host and the refused address`,
        );
        assert.deepEqual(
          asked,
          ['mail.example.test'],
          `${answers.join()}: the name was not looked up exactly once`,
        );
      } finally {
        await guarded.close();
      }
    }
    assert.equal(wire.hits(), 0, 'a refused address was connected to');
  });

  test('a name that does not resolve is a DNS failure', async (t) => {
    const guarded = channelSender({
      resolve: async () => {
        throw Object.assign(new Error(`no such name ${PASSWORD}`), { code: 'ENOTFOUND' });
      },
    });
    t.after(() => guarded.close());
    assert.deepEqual(
      await guarded.send(emailChannel(25, { smtpHost: 'mail.example.test' }), firing),
      {
        ok: false,
        responseStatus: null,
        error: 'dns_failure: ENOTFOUND',
      },
      'a name that does not resolve is not a DNS failure, or the error quotes more than the code',
    );
  });
});
