import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
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
import { publishEvent } from '../helpers/events.js';
import { makeTenant, makeUser, makeWebhookConnection, signIn } from '../helpers/factories.js';
import type { TestSession } from '../helpers/harness.js';
import { readConnection } from '../helpers/operate.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';

// A connection's page shows what the system changed by itself (docs/operators/web-ui.md): an automatic
// pause appears on the open page, banner and buttons, with no reload and no click. Real app, a real
// receiver on 127.0.0.1, Chromium; found by role and accessible name. Skipped without Chromium.
const skip = browserSkipReason();
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_TIMEOUT_MS: '5000',
};
const WAIT = 30_000;
const shown = (locator: Locator) => locator.first().waitFor({ state: 'visible', timeout: WAIT });

describe('a connection page that follows the system', () => {
  let h: UiHarness;
  let browser: Browser;
  let receiver: Receiver;
  let gone410 = false;
  let api: TestSession;
  let tp: TestPage;
  let page: Page;

  before(async () => {
    if (skip) return;
    receiver = await startReceiver((_request, _index, response: ServerResponse) => {
      response.statusCode = gone410 ? 410 : 200;
      response.end(gone410 ? 'gone' : 'ok');
    });
    h = await startUiHarness({ env: ENV, workers: { pollMs: 100 } });
    browser = await launchBrowser();
    const tenant = await makeTenant(h, { entitlements: ['integrations', 'integration_hub'] });
    const admin = await makeUser(h, tenant.id, { role: 'COMPANY_IT_ADMIN' });
    api = await signIn(h, admin);
    tp = await newPage(browser);
    page = tp.page;
    page.setDefaultTimeout(WAIT);
    await signInThroughUi(page, h.uiUrl, admin, '/connections');
  });
  after(async () => {
    await tp?.close();
    await browser?.close();
    await h?.close();
    await receiver?.close();
  });

  test(
    'a pause after a 410 shows on the open page by itself: banner, status and buttons',
    { skip, timeout: 120_000 },
    async () => {
      const hook = await makeWebhookConnection(h, api, receiver.url('/hooks'), { displayName: 'Shop hook' });
      await publishEvent(h, api, { type: 'order.created', data: { n: 1 } });
      await receiver.waitFor(1, WAIT);
      await page.goto(`${h.uiUrl}/connections/${hook.id}/events`);
      await shown(page.getByRole('heading', { level: 1, name: 'Shop hook' }));
      const pauseButton = page.getByRole('button', { name: 'Pause deliveries', exact: true });
      await shown(pauseButton);
      // Marks this document: a reload would make a new one without the mark.
      await page.evaluate('window.__sameDocument = true');

      gone410 = true;
      await publishEvent(h, api, { type: 'order.created', data: { n: 2 } });
      // The positive signal first: the system paused the connection.
      await waitUntil(async () => (await readConnection(h, api, hook.id)).pausedReason === 'gone', {
        message: 'the connection to be paused after the 410',
        timeoutMs: WAIT,
      });

      const banner = page.getByRole('region', { name: 'Deliveries are paused' });
      await shown(banner.getByText('paused because the receiver answered 410 Gone'));
      await shown(banner.getByRole('button', { name: 'Resume deliveries' }));
      await gone(pauseButton);
      assert.equal(
        await page.evaluate('window.__sameDocument === true'),
        true,
        'the page was reloaded to show the pause',
      );
      await assertNoSeriousViolations(page, 'connection paused while open');
      await screenshot(page, 'connection-paused-while-open');
      assert.deepEqual(tp.errors, [], 'the page reported errors');
    },
  );

  test(
    'the page counts and lists what the filter dropped, and shows each delivery’s ordering key, on a phone too',
    { skip, timeout: 120_000 },
    async () => {
      gone410 = false;
      const hook = await makeWebhookConnection(h, api, receiver.url('/gold'), {
        displayName: 'Gold orders',
        filter: { 'data.tier': 'gold' },
        ordering: 'per-key',
      });
      const kept = await publishEvent(h, api, { type: 'order.paid', data: { tier: 'gold' } });
      const ordered = await h.request<{ id: string }>('POST', '/api/v1/integrations/events', {
        session: api,
        body: { type: 'order.paid', data: { tier: 'gold' }, orderingKey: 'order-A-1001' },
      });
      assert.equal(ordered.status, 202, ordered.text);
      const dropped = await publishEvent(h, api, { type: 'order.paid', data: { tier: 'silver' } });
      assert.ok(kept.body.deliveries > 0, 'the gold event was not delivered');

      await page.goto(`${h.uiUrl}/connections/${hook.id}/events`);
      await shown(page.getByRole('heading', { level: 1, name: 'Gold orders' }));
      const section = page.getByRole('region', { name: 'Filtered out' });
      await shown(section.getByText('1 event was not delivered because the payload filter did not match it'));
      await section.getByText('Show them', { exact: true }).click();
      await shown(section.getByRole('rowheader', { name: 'order.paid' }));
      await shown(section.getByRole('cell', { name: dropped.body.id }));
      const row = page.getByRole('row').filter({ hasText: ordered.body.id });
      await shown(row.getByText('Ordering key order-A-1001'));
      await assertNoSeriousViolations(page, 'connection page with filtered events and an ordering key');
      await screenshot(page, 'connection-filtered-and-ordering-key');

      // At phone width the log is one card per delivery: nothing scrolls sideways.
      await page.setViewportSize({ width: 390, height: 844 });
      await shown(row.getByText('Ordering key order-A-1001'));
      const widths = (await page.evaluate(
        '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
      )) as { scroll: number; client: number };
      assert.ok(
        widths.scroll <= widths.client,
        `the page scrolls sideways: ${widths.scroll} px in ${widths.client}`,
      );
      // Every cell of the row lies within the screen, the last column's too (a table would push it off).
      const cells = row.getByRole('cell');
      for (let i = 0; i < (await cells.count()); i += 1) {
        const box = await cells.nth(i).boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `cell ${i} of the row lies off the screen`);
      }
      await screenshot(page, 'connection-filtered-phone');
      await page.setViewportSize({ width: 1280, height: 800 });

      await row.getByRole('link', { name: new RegExp(ordered.body.id) }).click();
      await shown(page.getByText('order-A-1001'));
      await shown(page.getByRole('term').filter({ hasText: 'Ordering key' }));
      assert.deepEqual(tp.errors, [], 'the pages reported errors');
    },
  );
});
