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
});
