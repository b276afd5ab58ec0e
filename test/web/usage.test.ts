import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import {
  assertNoPageErrors,
  assertNoSeriousViolations,
  browserSkipReason,
  eventually,
  launchBrowser,
  newPage,
  screenshot,
  signInThroughUi,
  startUiHarness,
  visible,
  WAIT_MS,
  type UiHarness,
} from '../helpers/browser.js';
import { makeSignedInTenant, makeTenant, makeUser, makeWebhookConnection } from '../helpers/factories.js';
import type { TestSession } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';

// Contract §24 in the browser, walked as a person: the tenant's Usage page (chart, table with totals,
// CSV, following new usage without a reload), the console's quotas on a tenant's page and its usage
// across tenants, and an API key's own rate limit in the create and rotate dialogs. Skipped test by
// test when Chromium is missing, so the run's totals count them.
const skip = browserSkipReason();
const PHONE = { width: 390, height: 844 };

/** Nothing scrolls sideways at the page's width. */
async function assertNoSidewaysScroll(page: Page, label: string): Promise<void> {
  const widths = (await page.evaluate(
    '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
  )) as { scroll: number; client: number };
  assert.ok(
    widths.scroll <= widths.client,
    `${label}: the page scrolls sideways (${widths.scroll} px in ${widths.client})`,
  );
}

/** The text of a table's "Total" row cell for a column (the foot of the usage table). */
async function totalOf(table: Locator, column: string): Promise<string> {
  const row = table.getByRole('row').filter({ has: table.page().getByRole('rowheader', { name: 'Total' }) });
  const headers = await table.getByRole('columnheader').allTextContents();
  const index = headers.findIndex((h) => h.trim() === column);
  assert.ok(index > 0, `the usage table has no column "${column}" (${headers.join(' | ')})`);
  return (
    await row
      .getByRole('cell')
      .nth(index - 1)
      .innerText()
  ).trim();
}

describe('usage, quotas and key rate limits in the UI', () => {
  let h: UiHarness;
  let browser: Browser;
  before(async () => {
    if (skip) return;
    browser = await launchBrowser();
    // The delivery worker runs, so that published events are delivered (and counted) to a local receiver.
    h = await startUiHarness({
      env: { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' },
      workers: { pollMs: 50 },
    });
  });
  after(async () => {
    await browser?.close();
    await h?.close();
  });

  async function publish(session: TestSession, n: number): Promise<void> {
    for (let i = 0; i < n; i += 1) {
      const r = await h.request('POST', '/api/v1/integrations/events', {
        session,
        body: { type: 'usage.test', data: { i } },
      });
      assert.equal(r.status, 202, `publishing answered ${r.status}: ${r.text}`);
    }
  }

  test(
    "the Usage page charts and tables the tenant's usage, follows new events without a reload, and downloads CSV",
    { skip, timeout: 300_000 },
    async (t) => {
      const { tenant, user, session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
      const receiver = await startReceiver(t);
      await makeWebhookConnection(h, session, receiver.url(), { eventTypes: ['usage.*'] });
      await publish(session, 3);
      await receiver.waitFor(3);
      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      try {
        await signInThroughUi(page, h.uiUrl, user);
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage' }).click();
        await visible(page.getByRole('heading', { level: 1, name: 'Usage' }));
        // The chart is an image with a sentence, not colours alone.
        const chart = page.getByRole('img', { name: 'Events and deliveries per day' });
        await visible(chart);
        const table = page.getByRole('table', { name: /newest first/ });
        await visible(table);
        await eventually(async () =>
          assert.equal(await totalOf(table, 'Events published'), '3', 'the total of events published'),
        );
        await eventually(async () =>
          assert.equal(await totalOf(table, 'Delivered'), '3', 'the total delivered'),
        );
        await visible(page.getByText(/Last 7 days: 3 events published, 3 delivered, 0 failed/));
        // Every day of the range, zeros included, and the total row.
        assert.equal(
          await table.getByRole('row').count(),
          1 + 7 + 1,
          'the table does not hold 7 days and a total',
        );
        await assertNoSeriousViolations(page, 'usage page');
        await screenshot(page, 'usage-7-days');

        // Events published elsewhere appear without a reload.
        await publish(session, 2);
        await eventually(async () =>
          assert.equal(await totalOf(table, 'Events published'), '5', 'the page did not follow new events'),
        );

        // The CSV is the same range's, fetched with the session.
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('button', { name: 'Download CSV' }).click(),
        ]);
        assert.match(
          download.suggestedFilename(),
          /^hubgate-usage-7d-\d{4}-\d{2}-\d{2}\.csv$/,
          'the CSV file name',
        );
        const path = await download.path();
        const csv = await readFile(path, 'utf8');
        assert.ok(csv.split('\n').length >= 8, `the CSV holds fewer than 7 days and a header: ${csv}`);

        // The last 24 hours, by hour; the range is in the URL.
        await page.getByLabel('Range').selectOption({ label: 'Last 24 hours, by hour' });
        await visible(page.getByRole('img', { name: 'Events and deliveries per hour' }));
        assert.match(page.url(), /[?&]range=24h/, 'the range is not in the URL');
        await eventually(async () =>
          assert.equal(
            await page
              .getByRole('table', { name: /newest first/ })
              .getByRole('row')
              .count(),
            1 + 24 + 1,
            'the table does not hold 24 hours and a total',
          ),
        );
        await screenshot(page, 'usage-24-hours');

        // A phone: the table is one card per hour, nothing scrolls sideways.
        await page.setViewportSize(PHONE);
        await visible(page.getByRole('heading', { level: 1, name: 'Usage' }));
        await assertNoSidewaysScroll(page, 'usage page at 390 px');
        await assertNoSeriousViolations(page, 'usage page at 390 px');
        await screenshot(page, 'usage-phone');
        assertNoPageErrors(tp, 'usage page');

        // A tenant without the integrations module has no Usage page in its navigation.
        const other = await makeTenant(h, { entitlements: ['integration_hub'] });
        const outsider = await makeUser(h, other.id, { role: 'COMPANY_IT_ADMIN' });
        const op = await newPage(browser);
        try {
          await signInThroughUi(op.page, h.uiUrl, outsider);
          await visible(
            op.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }),
          );
          assert.equal(
            await op.page
              .getByRole('navigation', { name: 'Main' })
              .getByRole('link', { name: 'Usage' })
              .count(),
            0,
            'a tenant without integrations is offered the Usage page',
          );
        } finally {
          await op.close();
        }
        assert.ok(tenant.id, 'the tenant has an ID');
      } finally {
        await tp.close();
      }
    },
  );

  test(
    "the console sets a tenant's quotas beside what is in use, and tables usage across tenants",
    { skip, timeout: 300_000 },
    async (t) => {
      const { tenant, session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
      const name = (
        await h.request<{ name: string }>('GET', `/api/v1/platform/tenants/${tenant.id}`, {
          token: h.platformToken,
        })
      ).body.name;
      const receiver = await startReceiver(t);
      await makeWebhookConnection(h, session, receiver.url(), { eventTypes: ['usage.*'] });
      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      try {
        await page.goto(`${h.uiUrl}/platform/tenants`);
        await page.getByLabel('Platform key', { exact: true }).fill(h.platformToken);
        await page.getByRole('button', { name: 'Open the console' }).click();
        await page.getByRole('link', { name }).click();
        await visible(page.getByRole('heading', { level: 1, name }));
        const quotas = page.getByRole('region', { name: 'Quotas' });
        await visible(quotas.getByRole('heading', { name: 'Quotas' }));
        await visible(quotas.getByText('0 · no limit').first());

        // Out of range: said beside the field, nothing sent.
        await quotas.getByRole('textbox', { name: 'Events per day' }).fill('0');
        await quotas.getByRole('textbox', { name: 'Retention in days' }).fill('400');
        await quotas.getByRole('button', { name: 'Save quotas' }).click();
        await visible(quotas.getByText('Enter a whole number of 1 or more, or leave it empty for no limit.'));
        await visible(quotas.getByText('Enter a whole number from 1 to 365, or leave it empty.'));
        const before = await h.request<{ eventsPerDay: number | null }>(
          'GET',
          `/api/v1/platform/tenants/${tenant.id}/quotas`,
          { token: h.platformToken },
        );
        assert.equal(before.body.eventsPerDay, null, 'a refused form changed the quotas');
        await assertNoSeriousViolations(page, 'quotas with errors');

        await quotas.getByRole('textbox', { name: 'Events per day' }).fill('1000');
        await quotas.getByRole('textbox', { name: 'Connections' }).fill('5');
        await quotas.getByRole('textbox', { name: 'Retention in days' }).fill('');
        await quotas.getByRole('button', { name: 'Save quotas' }).click();
        await visible(page.getByText('The quotas are saved.'));
        const saved = await h.request<{
          eventsPerDay: number | null;
          connections: number | null;
          retentionDays: number | null;
        }>('GET', `/api/v1/platform/tenants/${tenant.id}/quotas`, { token: h.platformToken });
        assert.deepEqual(
          [saved.body.eventsPerDay, saved.body.connections, saved.body.retentionDays],
          [1000, 5, null],
          'the quotas saved are not the ones typed',
        );
        await visible(quotas.getByRole('meter', { name: 'Connections' }));
        await visible(quotas.getByText('1 of 5'));

        // Events published meanwhile move the meter without a reload.
        await publish(session, 2);
        await visible(quotas.getByText('2 of 1,000'));
        await screenshot(page, 'console-tenant-quotas');
        await assertNoSeriousViolations(page, 'tenant page with quotas');
        await page.setViewportSize(PHONE);
        await assertNoSidewaysScroll(page, 'tenant page at 390 px');
        await screenshot(page, 'console-tenant-quotas-phone');
        await page.setViewportSize({ width: 1280, height: 800 });

        // Usage across tenants: this tenant's row, summed, linked to its page.
        await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Usage' }).click();
        await visible(page.getByRole('heading', { level: 1, name: 'Usage' }));
        const row = page.getByRole('row').filter({ has: page.getByRole('link', { name }) });
        await eventually(async () =>
          assert.equal(
            (await row.getByRole('cell').first().innerText()).trim(),
            '2',
            'events published of the tenant',
          ),
        );
        await assertNoSeriousViolations(page, 'usage across tenants');
        await screenshot(page, 'console-usage');
        await page.setViewportSize(PHONE);
        await assertNoSidewaysScroll(page, 'usage across tenants at 390 px');
        await screenshot(page, 'console-usage-phone');
        assertNoPageErrors(tp, 'console quotas and usage');
      } finally {
        await tp.close();
      }
    },
  );

  test(
    "an API key's own rate limit is set on create, shown in the list, and changed on rotate",
    { skip, timeout: 300_000 },
    async () => {
      const { user } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      try {
        await signInThroughUi(page, h.uiUrl, user);
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
        await page.getByRole('button', { name: 'Create key' }).click();
        let dialog = page.getByRole('dialog', { name: 'Create an API key' });
        await visible(dialog.getByRole('textbox', { name: 'Name' }));
        await dialog.getByRole('textbox', { name: 'Name' }).fill('limited');
        await dialog.getByRole('checkbox', { name: 'Read', exact: true }).first().check();
        const rate = dialog.getByRole('textbox', { name: /Requests per minute/ });
        await rate.fill('0');
        await dialog.getByRole('button', { name: 'Create key' }).click();
        await visible(dialog.getByText(/Enter a whole number from 1 to 100,000/));
        await rate.fill('600');
        await assertNoSeriousViolations(page, 'create key with a rate limit');
        await screenshot(page, 'key-create-rate-limit');
        await dialog.getByRole('button', { name: 'Create key' }).click();
        dialog = page.getByRole('dialog', { name: 'Save your API key' });
        await visible(dialog.getByText(/Rate limit: 600 requests per minute\./));
        // Closed without copying: the guard asks, and is told to close anyway.
        await dialog.getByRole('button', { name: 'Done' }).click();
        await dialog.getByRole('alertdialog').getByRole('button', { name: 'Close anyway' }).click();
        const row = page.getByRole('row').filter({ hasText: 'limited' });
        await visible(row.getByText('Rate limit: 600 requests per minute'));
        await assertNoSeriousViolations(page, 'key list with a rate limit');

        // Rotating shows the limit, and an empty field goes back to the default.
        await row.getByRole('button', { name: /Rotate/ }).click();
        dialog = page.getByRole('dialog', { name: 'Rotate “limited”' });
        const rotateRate = dialog.getByRole('textbox', { name: /Requests per minute/ });
        assert.equal(await rotateRate.inputValue(), '600', 'the rotate dialog does not show the key’s limit');
        await rotateRate.fill('');
        await screenshot(page, 'key-rotate-rate-limit');
        await dialog.getByRole('button', { name: 'Rotate key' }).click();
        dialog = page.getByRole('dialog', { name: /Save the new secret/ });
        await visible(dialog);
        await dialog.getByRole('button', { name: 'Done' }).click();
        await dialog.getByRole('alertdialog').getByRole('button', { name: 'Close anyway' }).click();
        // Back on the default: the row no longer names a limit of its own.
        await eventually(async () =>
          assert.equal(await row.getByText(/Rate limit:/).count(), 0, 'the key still shows its lifted limit'),
        );
        assertNoPageErrors(tp, 'api keys with rate limits');
      } finally {
        await tp.close();
      }
    },
  );
});
