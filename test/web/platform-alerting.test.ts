import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { SMTPServer } from 'smtp-server';
import {
  assertNoPageErrors,
  assertNoSeriousViolations,
  browserSkipReason,
  eventually,
  gone,
  launchBrowser,
  newPage,
  screenshot,
  startUiHarness,
  visible,
  WAIT_MS,
  type TestPage,
  type UiHarness,
} from '../helpers/browser.js';
import { startReceiver } from '../helpers/receiver.js';

// The operator console's alerting pages (docs/operators/alerting.md, docs/operators/web-ui.md), walked as an operator: channels of each
// kind against local receivers, their tests, secrets never shown; the routing rules edited, a
// server error on its field, and a conflict from a second tab that keeps the edit.
const skip = browserSkipReason();

const SECRETS = {
  webhookPath: '/hook-webhook-5ecret-Path',
  slackPath: '/services/T000/B000/sl4ckSecretToken',
  grafanaToken: 'glsa_GrafanaSecretToken123',
  httpPath: '/http-5ecret-Path',
  httpHeader: 'Bearer HeaderSecretValue42',
  smtpPassword: 'SmtpPassw0rd-Secret!',
};

/** An SMTP server on 127.0.0.1 (plaintext, as DELIVERY_ALLOW_HTTP allows) that records logins and mails. */
async function startSmtp() {
  const logins: string[] = [];
  const mails: string[][] = [];
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      logins.push(auth.password ?? '');
      callback(null, { user: auth.username });
    },
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        mails.push(session.envelope.rcptTo.map((r) => r.address));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { port, logins, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('operator console: alerting channels and routing rules', () => {
  let h: UiHarness;
  let browser: Browser;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  before(async () => {
    if (skip) return;
    browser = await launchBrowser();
    receiver = await startReceiver();
    smtp = await startSmtp();
    h = await startUiHarness({
      env: { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' },
    });
  });
  after(async () => {
    await browser?.close();
    await receiver?.close();
    await smtp?.close();
    await h?.close();
  });

  /** The tab holds the platform key as if pasted (sessionStorage, this tab's), before the page loads. */
  async function withKey(context: BrowserContext) {
    await context.addInitScript(
      `sessionStorage.setItem('hubgate.platformKey', ${JSON.stringify(h.platformToken)})`,
    );
  }

  async function open(page: Page, path: string, heading: string) {
    await page.goto(`${h.uiUrl}${path}`);
    await visible(page.getByRole('heading', { level: 1, name: heading }));
  }

  async function rowOf(page: Page, name: string): Promise<Locator> {
    const row = page
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: new RegExp(name) }) });
    await visible(row);
    return row;
  }

  const api = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    h.request(method, path, { token: h.platformToken, body, headers });

  const read = async <T>(path: string): Promise<T> => (await api('GET', path)).body as T;

  /** Neither the page's text nor its markup holds any secret value. */
  async function assertNoSecretShown(page: Page) {
    const text = await page.locator('body').innerText();
    const html = await page.content();
    for (const secret of Object.values(SECRETS)) {
      assert.ok(!text.includes(secret), `the page shows a secret: ${secret}`);
      assert.ok(!html.includes(secret), `the page's markup holds a secret: ${secret}`);
    }
  }

  async function addChannel(
    page: Page,
    kind: RegExp,
    name: string,
    fill: (dialog: Locator) => Promise<void>,
    shot?: string,
  ) {
    await page.getByRole('button', { name: 'Add channel' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Add an alerting channel' });
    await visible(dialog);
    await dialog.getByRole('radio', { name: kind }).check();
    await dialog.getByRole('textbox', { name: 'Name', exact: true }).fill(name);
    await fill(dialog);
    if (shot) {
      await screenshot(page, shot);
      await assertNoSeriousViolations(page, 'platform channel create');
    }
    await dialog.getByRole('button', { name: 'Add channel' }).click();
    await gone(dialog);
    await rowOf(page, name);
  }

  async function sendTest(page: Page, name: string, expected: RegExp) {
    const row = await rowOf(page, name);
    await row.getByRole('button', { name: `Send test to ${name}` }).click();
    await eventually(async () =>
      assert.match(
        await row.getByRole('status', { name: `Test of ${name}` }).innerText(),
        expected,
        `the test of ${name} does not report what was expected`,
      ),
    );
  }

  test(
    'channels of each kind: created, tested, secrets write-only, disabled and enabled, delete refused while used',
    { skip, timeout: 300_000 },
    async () => {
      const tp: TestPage = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      await withKey(tp.context);
      try {
        await open(page, '/platform/alerting/channels', 'Alerting channels');
        await visible(page.getByRole('heading', { name: 'No alerting channels yet' }));

        // A destination the SSRF policy refuses is said on its field, with why.
        await page.getByRole('button', { name: 'Add channel' }).first().click();
        let dialog = page.getByRole('dialog', { name: 'Add an alerting channel' });
        await dialog.getByRole('radio', { name: /^Slack/ }).check();
        await dialog.getByRole('textbox', { name: 'Name', exact: true }).fill('refused');
        await dialog.getByLabel('Slack webhook URL').fill('http://10.0.0.1/hook');
        await dialog.getByRole('button', { name: 'Add channel' }).click();
        await visible(dialog.getByText(/loopback, private, link-local/));
        assert.equal(
          await dialog.getByLabel('Slack webhook URL').getAttribute('aria-invalid'),
          'true',
          'the refused Slack URL is not marked invalid for screen readers',
        );
        await dialog.getByRole('button', { name: 'Cancel' }).click();
        await gone(dialog);

        // WEBHOOK: its generated signing secret is shown once.
        await page.getByRole('button', { name: 'Add channel' }).first().click();
        dialog = page.getByRole('dialog', { name: 'Add an alerting channel' });
        await dialog.getByRole('radio', { name: /^Webhook/ }).check();
        await dialog.getByRole('textbox', { name: 'Name', exact: true }).fill('ops webhook');
        await dialog.getByLabel('URL', { exact: true }).fill(receiver.url(SECRETS.webhookPath));
        await dialog.getByRole('button', { name: 'Add channel' }).click();
        const secretDialog = page.getByRole('dialog', { name: 'Save the signing secret' });
        await visible(secretDialog);
        const signingSecret = await secretDialog
          .getByRole('textbox', { name: 'Signing secret' })
          .inputValue();
        assert.match(signingSecret, /^whsec_/, "the webhook channel's signing secret is not a whsec_ secret");
        await secretDialog.getByRole('button', { name: 'Done' }).click();
        await secretDialog.getByRole('button', { name: 'Close without copying' }).click();
        await gone(secretDialog);
        await rowOf(page, 'ops webhook');

        await addChannel(page, /^Slack/, 'team slack', async (d) => {
          await d.getByLabel('Slack webhook URL').fill(receiver.url(SECRETS.slackPath));
        });
        await addChannel(page, /^Grafana/, 'grafana annotations', async (d) => {
          await d.getByLabel('Grafana URL').fill(receiver.url('/grafana'));
          await d.getByLabel('Tags (optional)').fill('hubgate, prod');
          await d.getByLabel('Service account token').fill(SECRETS.grafanaToken);
        });
        await addChannel(page, /^HTTP/, 'custom http', async (d) => {
          await d.getByLabel('URL', { exact: true }).fill(receiver.url(SECRETS.httpPath));
          await d.getByLabel('Method (optional)').selectOption('PUT');
          await d.getByLabel('Headers (optional)').fill(`Authorization: ${SECRETS.httpHeader}`);
        });
        // EMAIL without a password first: "not set".
        await addChannel(
          page,
          /^E-mail/,
          'on-call mail',
          async (d) => {
            await d
              .getByRole('textbox', { name: 'Recipients' })
              .fill('oncall@example.test, lead@example.test');
            await d.getByRole('textbox', { name: 'Sender address' }).fill('alerts@hub.example.test');
            await d.getByRole('textbox', { name: 'SMTP server' }).fill('127.0.0.1');
            await d.getByRole('textbox', { name: 'SMTP port' }).fill(String(smtp.port));
          },
          'platform-channel-create',
        );

        const mail = await rowOf(page, 'on-call mail');
        await visible(mail.getByText('not set'));
        const hook = await rowOf(page, 'ops webhook');
        assert.equal(await hook.getByText('set', { exact: true }).count(), 2, 'URL and signing secret: set');

        // The password set by editing; editing again with it left empty keeps it.
        await mail.getByRole('button', { name: 'Edit on-call mail' }).click();
        dialog = page.getByRole('dialog', { name: 'Edit “on-call mail”' });
        await dialog.getByLabel('SMTP password (optional)').fill(SECRETS.smtpPassword);
        await dialog.getByRole('button', { name: 'Save changes' }).click();
        await gone(dialog);
        await eventually(async () =>
          assert.equal(
            await mail.getByText('not set').count(),
            0,
            'the SMTP password still shows as not set after setting it',
          ),
        );
        await mail.getByRole('button', { name: 'Edit on-call mail' }).click();
        dialog = page.getByRole('dialog', { name: 'Edit “on-call mail”' });
        await visible(dialog.getByText(/^Set — leave empty to keep it/));
        assert.equal(
          await dialog.getByLabel('SMTP password (optional)').inputValue(),
          '',
          'the edit form shows the stored SMTP password',
        );
        await dialog.getByRole('textbox', { name: 'Sender address' }).fill('alerts2@hub.example.test');
        await dialog.getByRole('button', { name: 'Save changes' }).click();
        await gone(dialog);
        await visible(mail.getByText('alerts2@hub.example.test'));

        // "Send test" on each, the answer in words next to it; the receivers got them.
        await sendTest(page, 'ops webhook', /Test delivered: .*HTTP 200/);
        await sendTest(page, 'team slack', /Test delivered: .*HTTP 200/);
        await sendTest(page, 'grafana annotations', /Test delivered: .*HTTP 200/);
        await sendTest(page, 'custom http', /Test delivered: .*HTTP 200/);
        await sendTest(page, 'on-call mail', /Test delivered: .*SMTP 250/);
        // The last attempt per channel, from the API, once the list is read again.
        await visible((await rowOf(page, 'on-call mail')).getByText(/Test, SMTP 250/));
        const paths = receiver.received.map((r) => r.url);
        for (const path of [
          SECRETS.webhookPath,
          SECRETS.slackPath,
          '/grafana/api/annotations',
          SECRETS.httpPath,
        ])
          assert.ok(paths.includes(path), `nothing reached ${path}: ${paths.join(', ')}`);
        const http = receiver.received.find((r) => r.url === SECRETS.httpPath);
        assert.equal(http?.method, 'PUT', "the HTTP channel's test was not sent with its method");
        assert.equal(
          http?.headers.authorization,
          SECRETS.httpHeader,
          "the HTTP channel's test was not sent with its header",
        );
        assert.deepEqual(smtp.logins, [SECRETS.smtpPassword], 'the kept password logged in');
        assert.deepEqual(
          smtp.mails,
          [['oncall@example.test', 'lead@example.test']],
          "the e-mail channel's test did not go to both recipients",
        );

        // A channel that does not answer well: the failure in words.
        const failing = await api('POST', '/api/v1/platform/alerting/channels', {
          name: 'broken http',
          kind: 'HTTP',
          config: { url: `http://127.0.0.1:${smtp.port + 0}/nothing` },
        });
        assert.equal(failing.status, 201, 'a channel could not be created through the API');
        await page.reload();
        await sendTest(page, 'broken http', /Test failed/);

        await assertNoSecretShown(page);
        await screenshot(page, 'platform-channels');
        await assertNoSeriousViolations(page, 'platform channels');

        // Disable, then enable.
        const slack = await rowOf(page, 'team slack');
        await slack.getByRole('button', { name: 'Disable team slack' }).click();
        await visible(slack.getByText('Disabled', { exact: true }));
        await slack.getByRole('button', { name: 'Enable team slack' }).click();
        await visible(slack.getByText('Enabled', { exact: true }));

        // Delete is refused while a rule uses the channel, saying which; allowed once it does not.
        const channels = (
          await read<{
            data: Array<{ id: string; name: string }>;
          }>('/api/v1/platform/alerting/channels?limit=100')
        ).data;
        const slackId = channels.find((c) => c.name === 'team slack')?.id;
        assert.ok(slackId, 'the Slack channel is not listed through the API');
        const rules = (id: string[]) => ({
          defaults: { channelIds: [], repeatIntervalSeconds: 3600 },
          rules: [{ name: 'pager', matchers: [], channelIds: id }],
        });
        assert.equal(
          (await api('PUT', '/api/v1/platform/alerting/rules', rules([slackId]))).status,
          200,
          'a rule using the Slack channel could not be saved',
        );
        await slack.getByRole('button', { name: 'Delete team slack' }).click();
        dialog = page.getByRole('dialog', { name: 'Delete “team slack”?' });
        await dialog.getByRole('button', { name: 'Delete channel' }).click();
        await visible(dialog.getByRole('alert').getByText(/still in use by rule “pager”/));
        assert.equal(
          (await api('PUT', '/api/v1/platform/alerting/rules', { ...rules([]), rules: [] })).status,
          200,
          'the rules could not be cleared',
        );
        await dialog.getByRole('button', { name: 'Delete channel' }).click();
        await gone(dialog);
        await gone(slack);
        await visible(page.getByText('“team slack” was deleted.'));

        await assertNoSecretShown(page);
        assertNoPageErrors(tp, 'channels');
      } finally {
        await tp.close();
      }
    },
  );

  test(
    'routing rules: built in the editor and saved, a server error on its field, a conflict from a second tab keeps the edit',
    { skip, timeout: 300_000 },
    async () => {
      const channels = (
        await read<{
          data: Array<{ id: string; name: string }>;
        }>('/api/v1/platform/alerting/channels?limit=100')
      ).data;
      const hookId = channels.find((c) => c.name === 'ops webhook')?.id;
      assert.ok(hookId, 'the first test made the channels');
      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      await withKey(tp.context);
      try {
        await open(page, '/platform/alerting/rules', 'Routing rules');
        const revision = (await read<{ revision: number }>('/api/v1/platform/alerting/rules')).revision;

        // Defaults: the mail channel, every 2 hours.
        const defaults = page.getByRole('region', { name: 'Defaults' });
        await defaults.getByRole('checkbox', { name: /on-call mail/ }).check();
        await defaults.getByLabel('Default repeat interval: amount').fill('2');
        await defaults.getByLabel('Default repeat interval: unit').selectOption('hours');

        // A rule: failed deliveries to the webhook.
        await page.getByRole('button', { name: 'Add rule' }).click();
        const rule = page
          .getByRole('listitem')
          .filter({ has: page.getByRole('heading', { name: /^Rule 1/ }) });
        // Saving with nothing chosen says so on the fields first.
        await page.getByRole('button', { name: 'Save rules' }).click();
        await visible(rule.getByText('Give the rule a name.'));
        await visible(rule.getByText(/Choose at least one channel/));
        await rule.getByLabel('Name', { exact: true }).fill('failed deliveries');
        await rule.getByLabel(/condition 1 of .*: value/).fill('DeliveryFailed');
        await rule.getByRole('checkbox', { name: /ops webhook/ }).check();
        await rule.getByRole('checkbox', { name: /Repeat as the defaults say/ }).uncheck();
        await rule.getByLabel('Repeat interval: amount').fill('30');
        await rule.getByLabel('Repeat interval: unit').selectOption('minutes');
        await page.getByRole('button', { name: 'Save rules' }).click();
        await visible(page.getByText(`The rules are saved (revision ${revision + 1})`));
        const saved = await read<{
          defaults: { channelIds: string[]; repeatIntervalSeconds: number };
          rules: Array<{
            name: string;
            matchers: unknown[];
            channelIds: string[];
            repeatIntervalSeconds: number;
          }>;
        }>('/api/v1/platform/alerting/rules');
        assert.equal(
          saved.defaults.repeatIntervalSeconds,
          7200,
          'the saved default repeat interval is not the one entered',
        );
        assert.equal(saved.rules[0]?.name, 'failed deliveries', 'the saved rule lost its name');
        assert.deepEqual(
          saved.rules[0]?.matchers,
          [{ name: 'alertname', op: '=', value: 'DeliveryFailed' }],
          'the saved rule lost its condition',
        );
        assert.deepEqual(
          saved.rules[0]?.channelIds,
          [hookId],
          'the saved rule does not send to the webhook channel',
        );
        assert.equal(saved.rules[0]?.repeatIntervalSeconds, 1800, 'the saved rule lost its repeat interval');

        // A pattern JavaScript takes and RE2 refuses: the server's 400 shown on that field.
        await rule.getByRole('button', { name: /Add condition/ }).click();
        await rule.getByLabel(/condition 2 of .*: label/).fill('tenantId');
        await rule.getByLabel(/condition 2 of .*: test/).selectOption('=~');
        const pattern = rule.getByLabel(/condition 2 of .*: pattern/);
        await pattern.fill('ten_(?=x)');
        await page.getByRole('button', { name: 'Save rules' }).click();
        await visible(page.getByText('The rules were not saved.'));
        await eventually(async () =>
          assert.equal(
            await pattern.getAttribute('aria-invalid'),
            'true',
            "the server's refusal of the pattern is not marked on its field",
          ),
        );
        const described = (await pattern.getAttribute('aria-describedby')) ?? '';
        const errorId = described.split(' ').find((id) => id.endsWith('-error'));
        assert.ok(errorId, 'the field names its error');
        assert.ok(
          (await page.locator(`[id="${errorId}"]`).innerText()).length > 0,
          "the field's error text is empty",
        );
        await pattern.fill('ten_.*');
        await page.getByRole('button', { name: 'Save rules' }).click();
        await visible(page.getByText(`The rules are saved (revision ${revision + 2})`));
        await screenshot(page, 'platform-rules');
        await assertNoSeriousViolations(page, 'platform rules');

        // A second tab saves first; this tab's edit is kept and both versions are shown.
        const other = await tp.context.newPage();
        await open(other, '/platform/alerting/rules', 'Routing rules');
        await other.getByLabel('Default repeat interval: amount').fill('3');
        await other.getByRole('button', { name: 'Save rules' }).click();
        await visible(other.getByText(`The rules are saved (revision ${revision + 3})`));
        await other.close();

        await rule.getByLabel('Name', { exact: true }).fill('mine: failed deliveries');
        await page.getByRole('button', { name: 'Save rules' }).click();
        const conflict = page
          .getByRole('alert')
          .filter({ hasText: 'Someone else saved the rules meanwhile' });
        await visible(conflict);
        const theirs = conflict.getByRole('region', { name: `Theirs (saved, revision ${revision + 3})` });
        const mine = conflict.getByRole('region', { name: 'Yours (not saved)' });
        await visible(theirs.getByText(/repeat every 3 hours/));
        await visible(mine.getByText(/repeat every 2 hours/));
        await visible(mine.getByText('1. mine: failed deliveries'));
        await visible(theirs.getByText('1. failed deliveries'));
        assert.equal(
          await rule.getByLabel('Name', { exact: true }).inputValue(),
          'mine: failed deliveries',
          'the conflict threw away the edit not yet saved',
        );
        await screenshot(page, 'platform-rules-conflict');
        await assertNoSeriousViolations(page, 'platform rules conflict');

        await conflict.getByRole('button', { name: 'Keep mine and save over theirs' }).click();
        await visible(page.getByText(`The rules are saved (revision ${revision + 4})`));
        await gone(conflict);
        const final = await read<{
          defaults: { repeatIntervalSeconds: number };
          rules: Array<{ name: string }>;
        }>('/api/v1/platform/alerting/rules');
        assert.equal(
          final.rules[0]?.name,
          'mine: failed deliveries',
          'keeping mine did not save my rule name over theirs',
        );
        assert.equal(
          final.defaults.repeatIntervalSeconds,
          7200,
          'keeping mine did not save my default repeat interval over theirs',
        );

        assertNoPageErrors(tp, 'rules');
      } finally {
        await tp.close();
      }
    },
  );
});
