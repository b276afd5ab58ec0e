import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { assertNoLeak, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { parseMail, startSmtp } from '../helpers/smtp.js';
import { waitUntil } from '../helpers/wait.js';
import { invite, lookup, USERS } from './people.js';

const PUBLIC_URL = 'https://hub.example.com';
const SMTP_USER = 'hub-mailer';
const SMTP_PASSWORD = 'Smtp/Passw0rd?secret';

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const smtpUrl = (port: number) =>
  `smtp://${SMTP_USER}:${encodeURIComponent(SMTP_PASSWORD)}@127.0.0.1:${port}`;

describe('with SMTP_URL: the invitation is e-mailed', () => {
  let h: Harness;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  const tokens: string[] = [];
  before(async () => {
    smtp = await startSmtp();
    h = await startHarness({
      env: { PUBLIC_URL, SMTP_URL: smtpUrl(smtp.port), SMTP_FROM: 'people@hub.example.com' },
    });
  });
  after(async () => {
    await h.close();
    await smtp.close();
  });

  test('to the invited address, from SMTP_FROM, logged in with the URL’s credentials, with the link', async () => {
    const { session } = await makeSignedInTenant(h);
    const tenantName = (await h.request('GET', '/api/v1/auth/session', { session })).body.tenant
      .name as string;
    const invited = await invite(h, session, { role: 'COMPANY_IT_ADMIN' });
    tokens.push(invited.token);

    const mail = await waitUntil(() => smtp.mails.find((m) => m.to.includes(invited.email)), {
      message: () => `the invitation e-mail to ${invited.email} (${smtp.mails.length} mails so far)`,
    });
    assert.equal(mail.from, 'people@hub.example.com', 'the envelope sender is not SMTP_FROM');
    assert.deepEqual(
      smtp.logins,
      [{ username: SMTP_USER, password: SMTP_PASSWORD }],
      'the sender did not log in once with the user and (percent-decoded) password of SMTP_URL',
    );
    const { header, body } = parseMail(mail.raw);
    assert.equal(header('From'), 'people@hub.example.com', 'the From header is not SMTP_FROM');
    assert.equal(header('To'), invited.email, 'the To header is not the invited address');
    assert.ok(
      header('Subject')?.includes(tenantName),
      `the subject does not name the tenant: ${header('Subject')}`,
    );
    assert.ok(body.includes(invited.url), `the e-mail does not hold the link: ${body}`);
    assert.ok(body.includes('IT administrator'), `the e-mail does not say the role: ${body}`);
    await waitUntil(() => h.logs().includes('invitation e-mail sent'), {
      message: 'the log line of the sent e-mail',
    });
  });

  test('a new link for the same person is e-mailed too, and the old one no longer works', async () => {
    const { session } = await makeSignedInTenant(h);
    const invited = await invite(h, session);
    tokens.push(invited.token);
    const again = await h.request('POST', `${USERS}/${invited.id}/invitation`, { session });
    assert.equal(again.status, 201, `a new link answered ${again.status}: ${again.text}`);
    const url = again.body.invitation.url as string;
    tokens.push(url.split('#token=')[1] as string);
    await waitUntil(() => smtp.mails.some((m) => parseMail(m.raw).body.includes(url)), {
      message: 'the e-mail with the new link',
    });
    assert.equal((await lookup(h, invited.token)).status, 401, 'the old link still works');
  });

  test('neither the SMTP password nor any link is in a log', () => {
    assertNoLeak(h, [SMTP_PASSWORD, encodeURIComponent(SMTP_PASSWORD)], tokens);
  });
});

describe('when the mail server cannot be reached', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({
      env: { PUBLIC_URL, SMTP_URL: smtpUrl(await closedPort()), DELIVERY_TIMEOUT_MS: '2000' },
    });
  });
  after(() => h.close());

  test('the invitation is still made, its link answered, and the failure logged without the link', async () => {
    const { session } = await makeSignedInTenant(h);
    const invited = await invite(h, session);
    assert.match(invited.url, /^https:\/\/hub\.example\.com\/invite#token=/, 'the answer has no link');
    assert.equal(
      (await lookup(h, invited.token)).status,
      200,
      'the link of an invitation whose e-mail failed does not work',
    );
    await waitUntil(() => h.logs().includes('invitation e-mail not sent'), {
      message: 'the log line saying the e-mail was not sent',
    });
    const line =
      h
        .logs()
        .split('\n')
        .find((l) => l.includes('invitation e-mail not sent')) ?? '';
    assert.ok(line.includes(invited.id), `the log line does not say whose invitation it was: ${line}`);
    assertNoLeak(h, [SMTP_PASSWORD, encodeURIComponent(SMTP_PASSWORD)], [invited.token]);
  });
});
