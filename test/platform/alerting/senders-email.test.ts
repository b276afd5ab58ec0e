import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { after, describe, test } from 'node:test';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
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

interface Mail {
  from: string;
  to: string[];
  raw: string;
}

/** An SMTP server on 127.0.0.1 that records connections, logins and messages; plaintext by default. */
async function startSmtp(options: Partial<SMTPServerOptions> = {}) {
  const logins: Array<{ username: string; password: string }> = [];
  const mails: Mail[] = [];
  let connections = 0;
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onConnect(_session, callback) {
      connections++;
      callback();
    },
    onAuth(auth, _session, callback) {
      logins.push({ username: auth.username ?? '', password: auth.password ?? '' });
      callback(null, { user: auth.username });
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const envelope = session.envelope;
        mails.push({
          from: envelope.mailFrom ? envelope.mailFrom.address : '',
          to: envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
    ...options,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    logins,
    mails,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

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
  test('sends one message, logged in as `from`, with the subject and a text body of labels and annotations', async () => {
    const smtp = await startSmtp();
    try {
      assert.deepEqual(await sender.send(emailChannel(smtp.port), firing), {
        ok: true,
        responseStatus: 250,
        error: null,
      });
      assert.deepEqual(smtp.logins, [{ username: 'alerts@hub.example.test', password: PASSWORD }]);
      assert.equal(smtp.mails.length, 1);
      const [mail] = smtp.mails;
      assert.ok(mail, 'a message arrived');
      assert.equal(mail.from, 'alerts@hub.example.test');
      assert.deepEqual(mail.to, ['oncall@example.test', 'lead@example.test']);
      const { header, body } = parse(mail.raw);
      assert.equal(header('Subject'), '[FIRING] DeliveryFailed (tenant ten_abc)');
      assert.equal(header('From'), 'alerts@hub.example.test');
      assert.equal(header('To'), 'oncall@example.test, lead@example.test');
      assert.equal(header('X-Hubgate-Channel'), 'chn_0123456789012345678901');
      assert.match(header('Content-Type') ?? '', /^text\/plain/);
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
      );
      assert.match(body.split('\n').at(-2) ?? '', /^Sent by hubgate \S+ \(https:\/\/hub\.example\.test\)$/);
      assert.ok(!mail.raw.includes(PASSWORD), 'the password is not in the message');
    } finally {
      await smtp.close();
    }
  });

  test('logs in as smtpUser when set; a resolved notice says so and when it ended', async () => {
    const smtp = await startSmtp();
    try {
      const result = await sender.send(emailChannel(smtp.port, { smtpUser: 'relay-user' }), resolved);
      assert.equal(result.ok, true);
      assert.deepEqual(smtp.logins, [{ username: 'relay-user', password: PASSWORD }]);
      const { header, body } = parse(smtp.mails[0]?.raw ?? '');
      assert.equal(header('Subject'), '[RESOLVED] DeliveryFailed (tenant ten_abc)');
      assert.match(body, /^ {2}Ended: 2025-01-02T03:14:05\.000Z$/m);
    } finally {
      await smtp.close();
    }
  });

  test('a group is one message: counted in the subject, every alert listed, the rest counted', async () => {
    const smtp = await startSmtp();
    try {
      assert.equal((await sender.send(emailChannel(smtp.port), group)).ok, true);
      assert.equal(smtp.mails.length, 1);
      const { header, body } = parse(smtp.mails[0]?.raw ?? '');
      assert.equal(header('Subject'), '[FIRING:30] DeliveryFailed (tenant ten_abc)');
      assert.equal(body.match(/^Alert \d+ of 25: firing$/gm)?.length, 25);
      assert.match(body, /^ {4}connectionId = con_24$/m);
      assert.match(body, /^And 5 more alerts of this group, not listed\.$/m);
    } finally {
      await smtp.close();
    }
  });

  test('without a password nothing logs in', async () => {
    const smtp = await startSmtp();
    try {
      const result = await sender.send(emailChannel(smtp.port, { smtpPassword: undefined }), firing);
      assert.deepEqual(result, { ok: true, responseStatus: 250, error: null });
      assert.deepEqual(smtp.logins, []);
      assert.equal(smtp.mails.length, 1);
    } finally {
      await smtp.close();
    }
  });

  test('a recipient refused with 550 is a failure with that code', async () => {
    const smtp = await startSmtp({
      onRcptTo(_address, _session, callback) {
        callback(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }));
      },
    });
    try {
      assert.deepEqual(await sender.send(emailChannel(smtp.port), firing), {
        ok: false,
        responseStatus: 550,
        error: 'smtp 550: mailbox unavailable',
      });
      assert.equal(smtp.mails.length, 0);
    } finally {
      await smtp.close();
    }
  });

  test('refused credentials are a failure, and the error never quotes the password (even echoed)', async () => {
    const smtp = await startSmtp({
      onAuth(auth, _session, callback) {
        callback(new Error(`Invalid login ${auth.username} with ${auth.password ?? ''}`));
      },
    });
    try {
      const result = await sender.send(emailChannel(smtp.port), firing);
      assert.equal(result.ok, false);
      assert.equal(result.responseStatus, 535);
      assert.match(result.error ?? '', /^smtp 535: /);
      assert.ok(!(result.error ?? '').includes(PASSWORD), result.error ?? '');
      assert.ok(!(result.error ?? '').toLowerCase().includes(PASSWORD.toLowerCase()), result.error ?? '');
      assert.equal(smtp.mails.length, 0);
    } finally {
      await smtp.close();
    }
  });

  test('nothing listening is a connection error', async () => {
    const port = await closedPort();
    assert.deepEqual(await sender.send(emailChannel(port), firing), {
      ok: false,
      responseStatus: null,
      error: 'connection_error: ECONNREFUSED',
    });
  });

  test('unless plain HTTP is allowed, STARTTLS is required: a server without it gets no password', async () => {
    const smtp = await startSmtp();
    const strict = channelSender({ policy: { ...policy, allowHttp: false } });
    try {
      const result = await strict.send(emailChannel(smtp.port), firing);
      assert.deepEqual(result, {
        ok: false,
        responseStatus: 500,
        error: 'tls_error: STARTTLS refused (smtp 500)',
      });
      assert.equal(smtp.connections(), 1);
      assert.deepEqual(smtp.logins, []);
      assert.equal(smtp.mails.length, 0);
    } finally {
      await strict.close();
      await smtp.close();
    }
  });

  test('a STARTTLS certificate that does not verify is a TLS failure, before any login', async () => {
    // smtp-server's built-in self-signed certificate.
    const smtp = await startSmtp({ disabledCommands: [] });
    try {
      const result = await sender.send(emailChannel(smtp.port), firing);
      assert.equal(result.ok, false);
      assert.equal(result.responseStatus, null);
      // Which check fails depends on the certificate (expired, self-signed, wrong name): any does.
      assert.match(result.error ?? '', /^tls_error: [A-Z_]+$/);
      assert.deepEqual(smtp.logins, []);
      assert.equal(smtp.mails.length, 0);
    } finally {
      await smtp.close();
    }
  });

  test('a name is resolved once and the connection goes to the checked address', async () => {
    const smtp = await startSmtp();
    const dns = fakeResolver('127.0.0.1');
    const pinned = channelSender({ resolve: dns.resolve });
    try {
      const result = await pinned.send(emailChannel(smtp.port, { smtpHost: 'Mail.Example.Test' }), firing);
      assert.deepEqual(result, { ok: true, responseStatus: 250, error: null });
      assert.deepEqual(dns.asked, ['mail.example.test']);
      assert.equal(smtp.mails.length, 1);
    } finally {
      await pinned.close();
      await smtp.close();
    }
  });
});

describe('EMAIL channel SSRF policy', () => {
  test('a refused address literal is never connected to', async () => {
    for (const [host, listen, range] of [
      ['127.0.0.2', '127.0.0.2', 'loopback (127.0.0.0/8)'],
      ['::1', '::1', 'loopback (::1/128)'],
      ['[::1]', '::1', 'loopback (::1/128)'],
    ] as const) {
      const wire = await tripwire(listen);
      try {
        assert.deepEqual(await sender.send(emailChannel(wire.port, { smtpHost: host }), firing), {
          ok: false,
          responseStatus: null,
          error: `destination_forbidden: address ${listen} is in a refused range: ${range}`,
        });
        assert.equal(wire.hits(), 0);
      } finally {
        await wire.close();
      }
    }
  });

  test('local names are refused without a lookup', async () => {
    const dns = fakeResolver('127.0.0.1');
    const guarded = channelSender({ resolve: dns.resolve });
    try {
      for (const name of ['localhost', 'smtp.localhost', 'metadata.google.internal', 'mail.corp.internal']) {
        assert.deepEqual(await guarded.send(emailChannel(25, { smtpHost: name }), firing), {
          ok: false,
          responseStatus: null,
          error: `destination_forbidden: host ${name} is not allowed (local name)`,
        });
      }
      // Other IPv4 notations are the address they stand for.
      assert.deepEqual(await guarded.send(emailChannel(25, { smtpHost: '2130706434' }), firing), {
        ok: false,
        responseStatus: null,
        error: 'destination_forbidden: address 127.0.0.2 is in a refused range: loopback (127.0.0.0/8)',
      });
      assert.deepEqual(dns.asked, []);
    } finally {
      await guarded.close();
    }
  });

  test('a name resolving to a refused address is refused, whichever answer it is', async () => {
    const wire = await tripwire('127.0.0.2');
    try {
      for (const answers of [['127.0.0.2'], ['127.0.0.1', '127.0.0.2'], ['::ffff:127.0.0.2']]) {
        const asked: string[] = [];
        const guarded = channelSender({
          resolve: async (hostname) => {
            asked.push(hostname);
            return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
          },
        });
        try {
          const result = await guarded.send(
            emailChannel(wire.port, { smtpHost: 'mail.example.test' }),
            firing,
          );
          assert.equal(result.ok, false);
          assert.equal(result.responseStatus, null);
          assert.match(
            result.error ?? '',
            /^destination_forbidden: mail\.example\.test resolves to \S*127\.0\.0\.2, in a refused range: /,
          );
          assert.deepEqual(asked, ['mail.example.test']);
        } finally {
          await guarded.close();
        }
      }
      assert.equal(wire.hits(), 0);
    } finally {
      await wire.close();
    }
  });

  test('a name that does not resolve is a DNS failure', async () => {
    const guarded = channelSender({
      resolve: async () => {
        throw Object.assign(new Error(`no such name ${PASSWORD}`), { code: 'ENOTFOUND' });
      },
    });
    try {
      assert.deepEqual(await guarded.send(emailChannel(25, { smtpHost: 'mail.example.test' }), firing), {
        ok: false,
        responseStatus: null,
        error: 'dns_failure: ENOTFOUND',
      });
    } finally {
      await guarded.close();
    }
  });
});
