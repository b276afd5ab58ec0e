import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import {
  assertNoPageErrors,
  assertNoSeriousViolations,
  browserSkipReason,
  launchBrowser,
  newPage,
  screenshot,
  signInThroughUi,
  startUiHarness,
  visible,
  type UiHarness,
} from '../helpers/browser.js';
import { makeKey, makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';

// A phone held upright (390 × 844 CSS pixels): the lists whose actions sat in their table's last
// column, out of sight to the right, show each row as a card with its actions in reach, and no page
// scrolls sideways. Skipped test by test, not as a suite, so that the run's totals count them.
const skip = browserSkipReason();
const PHONE = { width: 390, height: 844 };

/** The element lies inside the screen's width (it may be further down: a person scrolls down, not sideways). */
async function withinWidth(locator: Locator, what: string): Promise<void> {
  await locator.scrollIntoViewIfNeeded();
  const box = await locator.boundingBox();
  assert.ok(box, `${what} is not shown`);
  assert.ok(
    box.x >= 0 && box.x + box.width <= PHONE.width,
    `${what} spans ${Math.round(box.x)}–${Math.round(box.x + box.width)} px, outside a ${PHONE.width} px screen`,
  );
  assert.ok(
    box.y >= 0 && box.y + box.height <= PHONE.height,
    `${what} is not in the viewport once scrolled to (${Math.round(box.y)} px from the top)`,
  );
}

async function noSidewaysScroll(page: Page, what: string): Promise<void> {
  const width = await page.evaluate<number>('document.documentElement.scrollWidth');
  assert.ok(width <= PHONE.width, `${what} is ${width} px wide on a ${PHONE.width} px screen`);
  // The table's own box does not scroll either: the row is a card, not a strip to swipe along.
  const scrolls = await page.evaluate<boolean>(
    "[...document.querySelectorAll('.table-wrap')].some((wrap) => wrap.scrollWidth > wrap.clientWidth + 1)",
  );
  assert.equal(scrolls, false, `${what}: a table still scrolls sideways inside its box`);
}

describe('lists on a phone', () => {
  let h: UiHarness;
  let browser: Browser;
  before(async () => {
    if (skip) return;
    browser = await launchBrowser();
    h = await startUiHarness();
  });
  after(async () => {
    await browser?.close();
    await h?.close();
  });

  test("the keys', connections' and people's actions are within a 390 px screen", { skip }, async () => {
    const { user, session } = await makeSignedInTenant(h);
    await makeKey(h, session, {
      name: 'nightly billing export to the data warehouse',
      scopes: ['integrations:READER', 'integrations:OPERATOR', 'integration_hub:READER'],
    });
    await makeWebhookConnection(h, session, 'https://receiver.example.com/hooks/orders/created-and-updated', {
      displayName: 'Orders webhook for the warehouse',
    });

    const tp = await newPage(browser);
    const { page } = tp;
    try {
      await page.setViewportSize(PHONE);
      await signInThroughUi(page, h.uiUrl, user, '/api-keys');
      const key = page.getByRole('row', { name: /nightly billing export/ });
      await visible(key);
      await withinWidth(key.getByRole('button', { name: 'Rotate nightly billing export' }), 'Rotate');
      await withinWidth(key.getByRole('button', { name: 'Revoke nightly billing export' }), 'Revoke');
      // Each value still says what it is: its column's name is shown beside it.
      await visible(key.getByRole('cell', { name: /Scopes/ }));
      await noSidewaysScroll(page, 'the API keys page');
      await screenshot(page, 'phone-api-keys');
      await assertNoSeriousViolations(page, 'API keys on a phone');

      await page.getByRole('link', { name: 'Connections' }).click();
      const connection = page.getByRole('row', { name: /Orders webhook for the warehouse/ });
      await visible(connection);
      await withinWidth(connection.getByRole('link', { name: /^Events of Orders webhook/ }), 'Events');
      await withinWidth(
        connection.getByRole('button', { name: /^Replace credentials of Orders webhook/ }),
        'Replace credentials',
      );
      await withinWidth(connection.getByRole('button', { name: /^Revoke Orders webhook/ }), 'Revoke');
      await noSidewaysScroll(page, 'the connections page');
      await screenshot(page, 'phone-connections');
      await assertNoSeriousViolations(page, 'connections on a phone');

      // The card still opens what the row opened.
      await connection.getByRole('button', { name: /^Revoke Orders webhook/ }).click();
      const revoke = page.getByRole('dialog', { name: 'Revoke “Orders webhook for the warehouse”?' });
      await visible(revoke);
      await revoke.getByRole('button', { name: 'Cancel' }).click();

      // People, the third list with actions on each row.
      await page.getByRole('link', { name: 'People' }).click();
      const me = page.getByRole('row', { name: new RegExp(user.email) });
      await visible(me);
      await withinWidth(me.getByRole('button', { name: `Change role of ${user.email}` }), 'Change role');
      await withinWidth(me.getByRole('button', { name: `Remove ${user.email}` }), 'Remove');
      await noSidewaysScroll(page, 'the people page');
      await screenshot(page, 'phone-people');
      assertNoPageErrors(tp, 'lists on a phone');
    } finally {
      await tp.close();
    }
  });
});
