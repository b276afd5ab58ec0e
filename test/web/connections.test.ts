import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import {
  assertNoSeriousViolations,
  browserSkipReason,
  hasFocus,
  launchBrowser,
  newPage,
  screenshot,
  signInThroughUi,
  startUiHarness,
  type TestPage,
  type UiHarness,
} from '../helpers/browser.js';
import { publishEvent } from '../helpers/events.js';
import { makeKey, makeTenant, makeUser, signIn } from '../helpers/factories.js';
import type { TestSession } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';

// The connections pages walked as a person does: create a webhook connection to a real local receiver
// from the catalog, meet the API's field errors, bind credentials and copy the generated secret, see
// deliveries and their attempts in the event log, retry a failed one, and revoke. Everything is found
// by role and accessible name. Skipped test by test when Chromium is missing.
const skip = browserSkipReason();

// Receivers listen on 127.0.0.1, opened by DELIVERY_ALLOWED_CIDRS; a failing delivery gives up after
// one retry a second later.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_RETRY_SCHEDULE: '1',
  DELIVERY_TIMEOUT_MS: '5000',
};
/** Generous: two loaded cores run this next to other suites. */
const WAIT = 30_000;
const NAME = 'Orders webhook';

/** Waits until `check` holds, calling `between` (e.g. a click on "Refresh") while it does not. */
async function until(
  check: () => Promise<boolean>,
  what: string,
  options: { ms?: number; between?: () => Promise<void> } = {},
): Promise<void> {
  await waitUntil(
    async () => {
      if (await check()) return true;
      await options.between?.();
      return false;
    },
    { message: what, timeoutMs: options.ms ?? WAIT, intervalMs: 250 },
  );
}

const visible = (locator: Locator) => locator.isVisible();

/** The text of the elements that describe a control (its hint and its error). */
const descriptionOf = (control: Locator): Promise<string> =>
  control.evaluate((element) =>
    (element.getAttribute('aria-describedby') ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .map((id: string) => element.ownerDocument.getElementById(id)?.textContent ?? '')
      .join(' '),
  );

/**
 * No console error, uncaught exception or failed request, except requests the browser abandoned
 * because the page moved on (a refresh of the event log in flight while a link is followed).
 */
function assertNoErrors(testPage: TestPage, label: string): void {
  const errors = testPage.errors.filter((e) => !/^request failed: .*net::ERR_ABORTED$/.test(e));
  assert.deepEqual(errors, [], `${label}: the page reported errors`);
}

describe('connections pages', () => {
  let h: UiHarness;
  let browser: Browser;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let failing = false;
  let tenant: { id: string; name: string };
  let admin: { email: string; password: string };
  let api: TestSession;
  let tp: TestPage;
  let page: Page;
  let secret = '';
  let publishToken = '';

  const publish = async (type: string, data: Record<string, unknown>) => {
    const r = await publishEvent(h, { token: publishToken }, { type, data });
    assert.equal(r.body.deliveries, 1, 'one delivery, to the webhook connection with credentials');
    return r.body;
  };
  const row = (text: string | RegExp) => page.getByRole('row').filter({ hasText: text });
  /** A delivery's row of the event log (not the row of its attempts below it). */
  const deliveryRow = (eventId: string) =>
    page
      .getByRole('row')
      .filter({ has: page.getByRole('button', { name: `Show attempts of ${eventId}`, exact: true }) });
  const refresh = () => page.getByRole('button', { name: /^Refresh/ }).click();

  before(async () => {
    if (skip) return;
    receiver = await startReceiver((_request, _index, response: ServerResponse) => {
      response.statusCode = failing ? 500 : 200;
      response.end(failing ? 'receiver down' : 'ok');
    });
    h = await startUiHarness({ env: ENV, workers: { pollMs: 100 } });
    browser = await launchBrowser();
    tenant = await makeTenant(h, { name: 'Acme Ltd', entitlements: ['integrations', 'integration_hub'] });
    admin = await makeUser(h, tenant.id, { role: 'COMPANY_IT_ADMIN' });
    api = await signIn(h, admin);
    publishToken = (await makeKey(h, api, { scopes: ['integrations:OPERATOR'], name: 'publisher' })).secret;
    assert.match(publishToken, /^tnt_/, 'the publishing key is not a tenant API key');
    tp = await newPage(browser);
    page = tp.page;
    page.setDefaultTimeout(WAIT);
    await tp.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.uiUrl });
    await signInThroughUi(page, h.uiUrl, admin, '/connections');
  });
  after(async () => {
    await tp?.close();
    await browser?.close();
    await h?.close();
    await receiver?.close();
  });

  test('an empty list says what to do next', { skip, timeout: 120_000 }, async () => {
    await page.getByRole('heading', { level: 2, name: 'No connections yet' }).waitFor();
    assert.equal(await page.getByRole('heading', { level: 1 }).count(), 1, 'one <h1> on the page');
    await assertNoSeriousViolations(page, 'connections empty');
    await screenshot(page, 'connections-empty');
    await page.getByRole('link', { name: 'Create connection' }).click();
    await page.getByRole('heading', { level: 1, name: 'Create a connection' }).waitFor();
  });

  test(
    'a webhook connection is created from the catalog, with the API’s errors shown on the field',
    { skip, timeout: 120_000 },
    async () => {
      // Every connector of the catalog is offered, by name; choosing one shows its fields.
      for (const name of ['Webhook', 'HTTP', 'Slack']) await page.getByRole('radio', { name }).waitFor();
      await page.getByRole('radio', { name: 'Webhook' }).check();
      assert.match(
        page.url(),
        /\/connections\/new\?connector=webhook$/,
        'choosing Webhook does not put the connector in the URL',
      );
      await page.getByLabel('Display name').fill(NAME);
      const url = page.getByRole('textbox', { name: 'Receiver URL' });
      const eventTypes = page.getByRole('combobox', { name: /^Event types/ });
      assert.match(
        await descriptionOf(eventTypes),
        /employee\.\*, invoice\.paid/,
        'the event types field does not describe its pattern with examples',
      );

      // A private address is refused by the SSRF policy (a decision on the address; nothing is contacted).
      await url.fill('https://10.0.0.1/');
      await page.getByRole('button', { name: 'Create connection' }).click();
      await page.getByText(/hubgate does not send to this address/).waitFor();
      assert.equal(
        await url.getAttribute('aria-invalid'),
        'true',
        'the refused receiver URL is not marked invalid for screen readers',
      );
      assert.match(
        await descriptionOf(url),
        /10\.0\.0\.1 is in a refused range: private/,
        'the refused receiver URL does not say which range refused it',
      );
      await until(() => hasFocus(url), 'focus on the refused field');
      await page.getByRole('alert').filter({ hasText: 'was not created' }).waitFor();
      await assertNoSeriousViolations(page, 'create connection with a field error');
      await screenshot(page, 'connection-create-field-error');

      // An invalid event type pattern is named on the event types field.
      await url.fill(receiver.url('/hooks/orders'));
      await eventTypes.fill('employee.*, Invoice.Paid');
      await page.getByRole('button', { name: 'Create connection' }).click();
      await page.getByText('“Invoice.Paid” is not a valid pattern', { exact: false }).waitFor();
      assert.equal(
        await eventTypes.getAttribute('aria-invalid'),
        'true',
        'the refused event type pattern is not marked invalid for screen readers',
      );
      assert.equal(await url.getAttribute('aria-invalid'), null, 'the URL error is gone');

      await eventTypes.fill('employee.*, invoice.paid');
      await page.getByRole('button', { name: 'Create connection' }).click();
      // The list opens with the new connection's credentials dialog, and the URL is clean again.
      await page.getByRole('dialog', { name: `Bind credentials to “${NAME}”` }).waitFor();
      await until(async () => new URL(page.url()).search === '', 'the bind parameter to leave the URL');
      assert.equal(
        new URL(page.url()).pathname,
        '/connections',
        'creating a connection does not land on the list',
      );
    },
  );

  test(
    'binding credentials shows the generated secret once, copied, and it verifies deliveries',
    { skip, timeout: 120_000 },
    async () => {
      const dialog = page.getByRole('dialog', { name: `Bind credentials to “${NAME}”` });
      const generate = dialog.getByRole('radio', { name: 'Generate a signing secret for me' });
      assert.equal(await generate.isChecked(), true, 'generating is the default');
      await dialog.getByRole('radio', { name: 'Use my own' }).check();
      await dialog.getByRole('textbox', { name: 'Signing secret' }).waitFor();
      await assertNoSeriousViolations(page, 'bind credentials dialog');
      await generate.check();
      await screenshot(page, 'connection-bind-form');
      await dialog.getByRole('button', { name: 'Bind credentials' }).click();

      const shown = page.getByRole('dialog', { name: `Signing secret of “${NAME}”` });
      const field = shown.getByRole('textbox', { name: 'Signing secret' });
      await field.waitFor();
      const value = await field.inputValue();
      assert.match(value, /^whsec_[A-Za-z0-9+/]+=*$/, 'the generated signing secret is not a whsec_ secret');
      await shown.getByText('This is the only time it is shown.').waitFor();
      await assertNoSeriousViolations(page, 'bind credentials dialog with the secret');
      await screenshot(page, 'connection-bind-secret');

      // Leaving without copying asks first.
      await shown.getByRole('button', { name: 'Done' }).click();
      await shown.getByRole('alert').filter({ hasText: 'You won’t see this secret again' }).waitFor();
      await assertNoSeriousViolations(page, 'secret not copied warning');
      await screenshot(page, 'connection-bind-secret-not-copied');
      await shown.getByRole('button', { name: 'Back to the secret' }).click();

      await shown.getByRole('button', { name: 'Copy' }).click();
      await shown.getByRole('button', { name: 'Copied' }).waitFor();
      secret = String(await page.evaluate('navigator.clipboard.readText()'));
      assert.equal(secret, value, 'the clipboard holds the secret shown');
      // Copied: Escape closes at once.
      await page.keyboard.press('Escape');
      await shown.waitFor({ state: 'hidden' });

      // Never kept anywhere the page could leak it.
      assert.ok(!page.url().includes(secret), 'the signing secret is in the address bar');
      const storage = String(
        await page.evaluate('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })'),
      );
      assert.ok(!storage.includes(secret.slice(6)), 'the secret is in web storage');

      const created = row(NAME);
      await created.getByText('Delivery enabled').waitFor();
      await created.getByText('Active').waitFor();
      assert.equal(
        await created.getByText('Webhook', { exact: true }).count(),
        1,
        "the connection's row does not name the Webhook connector once",
      );
      // Replacing says that the current secret keeps working for a day; Cancel leaves it as it is.
      await created.getByRole('button', { name: `Replace credentials of ${NAME}` }).click();
      const replace = page.getByRole('dialog', { name: `Replace the credentials of “${NAME}”` });
      await replace.getByText('keep working for 24 hours').waitFor();
      await replace.getByRole('button', { name: 'Cancel' }).click();
      await replace.waitFor({ state: 'hidden' });
    },
  );

  test(
    'the list shows every connection: connector, status, delivery, created',
    { skip, timeout: 120_000 },
    async () => {
      // Two more, made through the API: an http one with a long URL, a Slack one without credentials.
      const longUrl = receiver.url(`/ingest/${'segment-'.repeat(12)}end?tenant=acme&source=hubgate`);
      for (const body of [
        { connectorKey: 'http', displayName: 'Billing system (HTTP)', url: longUrl, method: 'PUT' },
        { connectorKey: 'slack', displayName: 'Ops channel', eventTypes: ['invoice.*'] },
      ]) {
        const r = await h.request('POST', '/api/v1/integrations/connections', { session: api, body });
        assert.equal(r.status, 201, r.text);
      }
      await page.reload();
      await row('Ops channel').getByText('Needs credentials').waitFor();
      await row('Billing system').getByText('HTTP', { exact: true }).waitFor();
      await row('Ops channel').getByRole('button', { name: 'Bind credentials of Ops channel' }).waitFor();
      assert.equal(
        await page.getByRole('link', { name: 'Create connection' }).count(),
        1,
        'the list offers Create connection more or less than once',
      );
      await assertNoSeriousViolations(page, 'connections list');
      await screenshot(page, 'connections-list');

      // The HTTP connector's credentials: a header name and a secret value; the API's refusal of a
      // header hubgate sets itself is shown on the header name field.
      await row('Billing system')
        .getByRole('button', { name: 'Bind credentials of Billing system (HTTP)' })
        .click();
      const dialog = page.getByRole('dialog', { name: 'Bind credentials to “Billing system (HTTP)”' });
      const headerName = dialog.getByRole('textbox', { name: 'Header name' });
      await headerName.fill('Webhook-Signature');
      const headerValue = dialog.getByLabel('Header value');
      assert.equal(
        await headerValue.getAttribute('type'),
        'password',
        'the header value is shown in clear as it is typed',
      );
      await headerValue.fill('Bearer s3cr3t');
      await dialog.getByRole('button', { name: 'Bind credentials' }).click();
      await dialog.getByText('Header name is a header hubgate sets itself.').waitFor();
      assert.equal(
        await headerName.getAttribute('aria-invalid'),
        'true',
        'the refused header name is not marked invalid for screen readers',
      );
      await assertNoSeriousViolations(page, 'bind credentials dialog with a field error');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      await row('Billing system').getByText('Needs credentials').waitFor();
    },
  );

  test('the create page takes its connector from the URL', { skip, timeout: 60_000 }, async () => {
    await page.goto(`${h.uiUrl}/connections/new?connector=http`);
    await page.getByRole('heading', { level: 1, name: 'Create a connection' }).waitFor();
    assert.equal(
      await page.getByRole('radio', { name: 'HTTP' }).isChecked(),
      true,
      'the connector in the URL is not chosen on the create page',
    );
    assert.equal(
      await page.getByRole('combobox', { name: /^Method/ }).inputValue(),
      'POST',
      'the HTTP connector does not default to POST',
    );
    await page.getByRole('link', { name: 'Cancel' }).click();
    await page.getByRole('heading', { level: 1, name: 'Connections' }).waitFor();
  });

  test(
    'a published event is delivered, and the event log shows the delivery and its attempt',
    { skip, timeout: 120_000 },
    async () => {
      const event = await publish('employee.created', { name: 'Ada', id: 7 });
      const [got] = await receiver.waitFor(1, WAIT);
      assert.ok(got, 'the receiver got no delivery');
      assert.equal(got.url, '/hooks/orders', "the delivery reached another path than the connection's URL");
      // The secret copied from the page verifies the delivery's Standard Webhooks signature.
      const verified = new Webhook(secret).verify(got.body, {
        'webhook-id': String(got.headers['webhook-id']),
        'webhook-timestamp': String(got.headers['webhook-timestamp']),
        'webhook-signature': String(got.headers['webhook-signature']),
      });
      assert.deepEqual(
        verified,
        {
          id: event.id,
          type: 'employee.created',
          timestamp: event.createdAt,
          data: { name: 'Ada', id: 7 },
        },
        "the delivery's signature does not verify with the copied secret, or its body differs",
      );

      await page.getByRole('link', { name: `Events of ${NAME}` }).click();
      await page.getByRole('heading', { level: 1, name: NAME }).waitFor();
      await page.getByText(receiver.url('/hooks/orders')).waitFor();
      const delivery = deliveryRow(event.id);
      await until(() => visible(delivery.getByText('Delivered')), 'the delivery to show as delivered', {
        between: refresh,
      });
      await delivery.getByText('employee.created').waitFor();

      const toggle = delivery.getByRole('button', { name: `Show attempts of ${event.id}` });
      assert.equal(
        await toggle.getAttribute('aria-expanded'),
        'false',
        'the attempts toggle says it is expanded before it is opened',
      );
      await toggle.click();
      assert.equal(
        await toggle.getAttribute('aria-expanded'),
        'true',
        'the attempts toggle does not say it is expanded once opened',
      );
      const attempts = page.getByRole('table', { name: `Attempts of ${event.id}` });
      const first = attempts.getByRole('row').filter({ hasText: '127.0.0.1' });
      await first.waitFor();
      await first.getByText('200', { exact: true }).waitFor();
      await first.getByText(/\d+ ms/).waitFor();
      await assertNoSeriousViolations(page, 'event log with an expanded attempt');
      await screenshot(page, 'connection-events-expanded');
      await toggle.click();
      await attempts.waitFor({ state: 'hidden' });
    },
  );

  test(
    'a failed delivery shows why, is found by the status filter, and is retried',
    { skip, timeout: 120_000 },
    async () => {
      failing = true;
      const event = await publish('employee.updated', { id: 8 });
      await receiver.waitFor(3, WAIT); // the first delivery, then this one's two attempts

      await page.getByRole('combobox', { name: 'Status' }).selectOption({ label: 'Failed' });
      await until(
        async () => new URL(page.url()).searchParams.get('status') === 'failed',
        'the filter in the URL',
      );
      const delivery = deliveryRow(event.id);
      await until(() => visible(delivery.getByText('Failed', { exact: true })), 'the delivery to fail', {
        between: refresh,
      });
      assert.equal(await row('employee.created').count(), 0, 'the delivered one is filtered out');
      await delivery.getByRole('button', { name: `Show attempts of ${event.id}` }).click();
      const attempts = page.getByRole('table', { name: `Attempts of ${event.id}` });
      assert.equal(
        await attempts.getByText('The receiver answered with an error status').count(),
        2,
        'the failed delivery does not show both attempts as error statuses',
      );
      assert.equal(
        await attempts.getByText('500', { exact: true }).count(),
        2,
        "the failed delivery's attempts do not show the receiver's 500",
      );
      await assertNoSeriousViolations(page, 'event log filtered by failed');
      await screenshot(page, 'connection-events-failed');

      // The filter survives a reload.
      await page.reload();
      await delivery.getByText('Failed', { exact: true }).waitFor();
      assert.equal(
        await page.getByRole('combobox', { name: 'Status' }).inputValue(),
        'failed',
        'the status filter is not kept across a reload',
      );

      failing = false;
      await delivery.getByRole('button', { name: `Retry delivery of ${event.id}` }).click();
      await page.getByText('is queued again').waitFor();
      // It leaves the failed list: the filter now shows nothing failed.
      await page.getByRole('heading', { level: 2, name: 'No failed deliveries' }).waitFor();
      await screenshot(page, 'connection-events-none-failed');
      await receiver.waitFor(4, WAIT);
      await page.getByRole('combobox', { name: 'Status' }).selectOption({ label: 'All statuses' });
      await until(
        () => visible(deliveryRow(event.id).getByText('Delivered')),
        'the retried delivery to be delivered',
        {
          between: refresh,
        },
      );
      assert.equal(
        await deliveryRow(event.id)
          .getByRole('button', { name: /^Retry/ })
          .count(),
        0,
        'the delivered retry still offers Retry',
      );
    },
  );

  test(
    'revoking asks first, naming the connection, and the list shows it revoked',
    { skip, timeout: 120_000 },
    async () => {
      await page.getByRole('link', { name: 'Connections', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Connections' }).waitFor();
      await row(NAME)
        .getByRole('button', { name: `Revoke ${NAME}` })
        .click();
      const dialog = page.getByRole('dialog', { name: `Revoke “${NAME}”?` });
      await dialog.getByText('will never send another event').waitFor();
      await dialog.getByText('cancelled').waitFor();
      await assertNoSeriousViolations(page, 'revoke confirmation');
      await screenshot(page, 'connection-revoke-confirm');
      // Cancel changes nothing.
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'hidden' });
      await row(NAME).getByText('Active').waitFor();

      await row(NAME)
        .getByRole('button', { name: `Revoke ${NAME}` })
        .click();
      await dialog.getByRole('button', { name: 'Revoke connection' }).click();
      await dialog.waitFor({ state: 'hidden' });
      await page
        .getByRole('status')
        .filter({ hasText: `“${NAME}” was revoked` })
        .waitFor();
      // The Revoke button is gone with the row's actions: the focus is on what happened, not lost.
      const focusedText = async () => String(await page.evaluate('document.activeElement?.textContent'));
      await until(
        async () => (await focusedText()) === `“${NAME}” was revoked. No event will be sent to it again.`,
        'the focus on the message',
      ).catch(async (error: unknown) => assert.fail(`${String(error)}; focus on: ${await focusedText()}`));
      const revoked = row(NAME);
      await revoked.getByText('Revoked').waitFor();
      assert.equal(await revoked.getByRole('button').count(), 0, 'a revoked connection has no actions');
      await revoked.getByRole('link', { name: `Events of ${NAME}` }).waitFor();

      // Its event log still reads, and offers no retry.
      await revoked.getByRole('link', { name: `Events of ${NAME}` }).click();
      await page.getByRole('heading', { level: 1, name: NAME }).waitFor();
      await page.getByText('Off: nothing is sent to a revoked connection').waitFor();
      assertNoErrors(tp, 'the connections pages');
    },
  );

  test(
    'a member sees the list, and no action that changes anything',
    { skip, timeout: 120_000 },
    async () => {
      const member = await makeUser(h, tenant.id, { role: 'MEMBER' });
      const other = await newPage(browser, { colorScheme: 'dark' });
      try {
        other.page.setDefaultTimeout(WAIT);
        await signInThroughUi(other.page, h.uiUrl, member, '/connections');
        const list = other.page.getByRole('table');
        await list.getByText('Ops channel', { exact: true }).waitFor();
        assert.equal(
          await other.page.getByRole('link', { name: 'Create connection' }).count(),
          0,
          'a member is offered Create connection',
        );
        assert.equal(await list.getByRole('button').count(), 0, 'no bind or revoke for a member');
        assert.equal(
          await list.getByRole('link', { name: /^Events of/ }).count(),
          3,
          'a member does not see the event log links of all three connections',
        );
        await assertNoSeriousViolations(other.page, 'connections list for a member');
        assertNoErrors(other, 'the list for a member');
      } finally {
        await other.close();
      }
    },
  );

  test('an unknown connection’s event log says so, with a way back', { skip, timeout: 60_000 }, async () => {
    await page.goto(`${h.uiUrl}/connections/con_0000000000000000000000/events`);
    await page.getByRole('heading', { level: 1, name: 'Connection not found' }).waitFor();
    await assertNoSeriousViolations(page, 'event log of an unknown connection');
    await screenshot(page, 'connection-not-found');
    await page.getByRole('link', { name: 'Back to connections' }).click();
    await page.getByRole('heading', { level: 1, name: 'Connections' }).waitFor();
  });
});
