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
    // The console's channels and providers below point at 127.0.0.1, where nothing needs to listen.
    h = await startUiHarness({
      env: { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' },
    });
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

  /** Every button and link of the row lies inside the screen's width, and the page does not scroll sideways. */
  async function rowFits(page: Page, row: Locator, what: string): Promise<void> {
    await visible(row);
    const controls = row.locator('button, a');
    const count = await controls.count();
    for (let i = 0; i < count; i += 1) {
      const control = controls.nth(i);
      await withinWidth(control, `${what}: “${(await control.innerText()).trim()}”`);
    }
    const { scrollWidth, clientWidth } = await page.evaluate<{ scrollWidth: number; clientWidth: number }>(
      '({ scrollWidth: document.scrollingElement.scrollWidth, clientWidth: document.scrollingElement.clientWidth })',
    );
    assert.ok(scrollWidth <= clientWidth, `${what} scrolls sideways: ${scrollWidth} px in ${clientWidth} px`);
    await noSidewaysScroll(page, what);
  }

  test(
    'the overview, audit log, event types and the console’s tenants, channels and providers fit a 390 px screen',
    { skip, timeout: 240_000 },
    async () => {
      const { user, session } = await makeSignedInTenant(h);
      await makeWebhookConnection(
        h,
        session,
        'https://receiver.example.com/hooks/orders/created-and-updated',
        {
          displayName: 'Orders webhook for the warehouse',
        },
      );
      const type = await h.request('POST', '/api/v1/integrations/event-types', {
        session,
        body: {
          name: 'order.fulfilment.partially_shipped',
          description: 'Some of an order’s lines left the warehouse',
          schema: {
            type: 'object',
            required: ['orderId', 'shipmentReference'],
            properties: {
              orderId: { type: 'string', pattern: '^ORD-[0-9]{6,12}-[A-Z]{2,3}$' },
              shipmentReference: { type: 'string', description: 'the carrier’s tracking reference' },
            },
          },
        },
      });
      assert.equal(type.status, 201, `creating an event type answered ${type.status}: ${type.text}`);
      const platform = (method: string, path: string, body: unknown) =>
        h.request(method, path, { token: h.platformToken, body });
      const channel = await platform('POST', '/api/v1/platform/alerting/channels', {
        name: 'on-call webhook of the payments team',
        kind: 'HTTP',
        config: { url: 'http://127.0.0.1:9/alerts/payments-team/on-call/receiver-with-a-long-path' },
      });
      assert.equal(channel.status, 201, `creating a channel answered ${channel.status}: ${channel.text}`);
      const provider = await platform('POST', '/api/v1/platform/oauth-providers', {
        key: 'ledgerly',
        name: 'Ledgerly accounting',
        authorizationUrl: 'http://127.0.0.1:9/oauth/authorize',
        tokenUrl: 'http://127.0.0.1:9/oauth/token',
        apiBaseUrl: 'http://127.0.0.1:9/api/v2/accounting/organisations',
        clientId: 'hubgate-client',
        clientSecret: 'not-shown-anywhere',
        scopes: ['openid', 'accounting.transactions.read', 'accounting.contacts.read'],
      });
      assert.equal(provider.status, 201, `creating a provider answered ${provider.status}: ${provider.text}`);

      const tp = await newPage(browser);
      const { page } = tp;
      try {
        await page.setViewportSize(PHONE);
        await signInThroughUi(page, h.uiUrl, user, '/');
        await rowFits(page, page.getByRole('row', { name: /^Webhook/ }), 'the overview’s connectors');
        await screenshot(page, 'phone-overview');
        await assertNoSeriousViolations(page, 'the overview on a phone');

        await page.goto(`${h.uiUrl}/audit-log`);
        await rowFits(page, page.getByRole('row', { name: /Created a connection/ }), 'the audit log');
        await screenshot(page, 'phone-audit-log');
        await assertNoSeriousViolations(page, 'the audit log on a phone');

        await page.goto(`${h.uiUrl}/event-types`);
        await rowFits(
          page,
          page.getByRole('row', { name: /order\.fulfilment\.partially_shipped/ }),
          'the event types',
        );
        await screenshot(page, 'phone-event-types');
        await assertNoSeriousViolations(page, 'event types on a phone');

        await page.goto(`${h.uiUrl}/platform/tenants`);
        await page.getByLabel('Platform key', { exact: true }).fill(h.platformToken);
        await page.getByRole('button', { name: 'Open the console' }).click();
        await rowFits(page, page.getByRole('row', { name: /Tenant / }).first(), 'the console’s tenants');
        await screenshot(page, 'phone-console-tenants');
        await assertNoSeriousViolations(page, 'tenants on a phone');

        await page.goto(`${h.uiUrl}/platform/alerting/channels`);
        await rowFits(page, page.getByRole('row', { name: /on-call webhook/ }), 'the alerting channels');
        await screenshot(page, 'phone-console-channels');
        await assertNoSeriousViolations(page, 'alerting channels on a phone');

        await page.goto(`${h.uiUrl}/platform/oauth-providers`);
        await rowFits(page, page.getByRole('row', { name: /Ledgerly accounting/ }), 'the OAuth2 providers');
        await screenshot(page, 'phone-console-providers');
        await assertNoSeriousViolations(page, 'OAuth2 providers on a phone');
        assertNoPageErrors(tp, 'more lists on a phone');
      } finally {
        await tp.close();
      }
    },
  );
});
