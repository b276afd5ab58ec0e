import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import {
  assertNoSeriousViolations,
  browserSkipReason,
  gone,
  launchBrowser,
  newPage,
  screenshot,
  signInThroughUi,
  startUiHarness,
  type TestPage,
  type UiHarness,
} from '../helpers/browser.js';
import { makeTenant, makeUser, signIn } from '../helpers/factories.js';
import type { TestSession } from '../helpers/harness.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

// Ordered delivery in the web UI (docs/api/events.md, Ordering): the delivery order chosen on create
// and edit, and a delivery waiting for the earlier one of its key shown so in the log and on its page.
// Found by role and accessible name. Skipped without Chromium.
const skip = browserSkipReason();
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_TIMEOUT_MS: '30000',
};
const WAIT = 30_000;
const NAME = 'Order updates';
const CONNECTIONS = '/api/v1/integrations/connections';
const shown = (locator: Locator) => locator.first().waitFor({ state: 'visible', timeout: WAIT });

describe('ordered delivery in the web UI', () => {
  let h: UiHarness;
  let browser: Browser;
  let receiver: Receiver;
  let api: TestSession;
  let tp: TestPage;
  let page: Page;
  // The receiver holds its first request until the test lets it go: the next of the key waits.
  let letGo = () => {};
  const held = new Promise<void>((resolve) => (letGo = resolve));

  before(async () => {
    if (skip) return;
    receiver = await startReceiver(async (_r, index, res) => {
      if (index === 0) await held;
      res.end('ok');
    });
    h = await startUiHarness({ env: ENV, workers: { pollMs: 100 } });
    browser = await launchBrowser();
    const tenant = await makeTenant(h, { entitlements: ['integrations', 'integration_hub'] });
    const admin = await makeUser(h, tenant.id, { role: 'COMPANY_IT_ADMIN' });
    api = await signIn(h, admin);
    tp = await newPage(browser);
    page = tp.page;
    page.setDefaultTimeout(WAIT);
    await signInThroughUi(page, h.uiUrl, admin, '/connections/new?connector=webhook');
  });
  after(async () => {
    letGo();
    await tp?.close();
    await browser?.close();
    await h?.close();
    await receiver?.close();
  });

  test(
    'per-key chosen on create; the waiting delivery says so; edit shows and changes the order',
    { skip, timeout: 120_000 },
    async () => {
      await page.getByLabel('Display name').fill(NAME);
      await page.getByRole('textbox', { name: 'Receiver URL' }).fill(receiver.url('/orders'));
      const order = page.getByRole('combobox', { name: /^Delivery order/ });
      assert.equal(await order.inputValue(), 'none', 'a new connection does not start unordered');
      await order.selectOption({ label: 'In order per ordering key' });
      await page.getByRole('button', { name: 'Create connection' }).click();
      await shown(page.getByRole('dialog', { name: `Bind credentials to “${NAME}”` }));
      await page.keyboard.press('Escape');
      const list = await h.request('GET', CONNECTIONS, { session: api });
      const id = list.body.data[0].id as string;
      assert.equal(
        list.body.data[0].config.ordering,
        'per-key',
        'the form did not create a per-key connection',
      );
      const bound = await h.request('PUT', `${CONNECTIONS}/${id}/credentials`, { session: api, body: {} });
      assert.equal(bound.status, 200, bound.text);

      const published: string[] = [];
      for (const n of [1, 2]) {
        const r = await h.request('POST', '/api/v1/integrations/events', {
          session: api,
          body: { type: 'order.updated', data: { n }, orderingKey: 'order-1' },
        });
        assert.equal(r.status, 202, r.text);
        published.push(r.body.id as string);
      }
      await receiver.waitFor(1);
      await page.goto(`${h.uiUrl}/connections/${id}/events`);
      await shown(page.getByRole('heading', { level: 1, name: NAME }));
      const facts = page.getByRole('region', { name: 'Connection' });
      await shown(facts.getByText('In order per ordering key'));
      const row = page.getByRole('row').filter({ hasText: published[1]! });
      await shown(row.getByText('After the earlier event of its key'));
      await assertNoSeriousViolations(page, 'event log with a delivery waiting for its key');
      await screenshot(page, 'ordering-event-log-waiting');
      await row.getByRole('link', { name: new RegExp(published[1]!) }).click();
      await shown(page.getByText('Waits for'));
      await assertNoSeriousViolations(page, 'a delivery waiting for its key');
      await screenshot(page, 'ordering-delivery-waiting');
      assert.equal(receiver.received.length, 1, 'the second of the key was sent while the first was held');
      letGo();
      await receiver.waitFor(2);

      await page.goto(`${h.uiUrl}/connections/${id}/events`);
      await page.getByRole('button', { name: 'Edit', exact: true }).click();
      const dialog = page.getByRole('dialog', { name: `Edit “${NAME}”` });
      const edited = dialog.getByRole('combobox', { name: /^Delivery order/ });
      assert.equal(await edited.inputValue(), 'per-key', 'the edit dialog does not show the order');
      await edited.selectOption('none');
      await dialog.getByRole('button', { name: 'Save changes' }).click();
      await shown(page.getByRole('status').filter({ hasText: 'Saved the changes' }));
      const after = await h.request('GET', `${CONNECTIONS}/${id}`, { session: api });
      assert.equal(after.body.config.ordering, 'none', 'the edit dialog did not change the order');
      await gone(facts.getByText('In order per ordering key'));
      assert.deepEqual(tp.errors, [], 'the pages reported errors');
    },
  );
});
