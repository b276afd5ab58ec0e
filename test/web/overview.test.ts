import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
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
  WAIT_MS,
  type UiHarness,
} from '../helpers/browser.js';
import { makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';

// The hub overview (docs/operators/web-ui.md) as a person reads it after pausing their only connection.
// Skipped test by test when Chromium is missing, so the run's totals count them.
const skip = browserSkipReason();

describe('hub overview', () => {
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

  test(
    'a paused connection is a connection: no “No connections yet”, and the pause is said',
    { skip, timeout: 120_000 },
    async () => {
      const { user, session } = await makeSignedInTenant(h);
      const connection = await makeWebhookConnection(h, session, 'https://receiver.example.com/orders', {
        displayName: 'Orders webhook',
      });
      const paused = await h.request('POST', `/api/v1/integrations/connections/${connection.id}/pause`, {
        session,
      });
      assert.equal(paused.status, 200, `pausing answered ${paused.status}: ${paused.text}`);

      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      try {
        await signInThroughUi(page, h.uiUrl, user, '/');
        const status = page.getByRole('region', { name: 'Status' });
        await visible(status.getByText('1 connection is paused: nothing is sent to it until it is resumed.'));
        assert.equal(
          await page.getByText('No connections yet').count(),
          0,
          'the overview says “No connections yet” while a connection is paused',
        );
        // The connectors' counts are of active and revoked ones: they say the paused one is not among them.
        await visible(
          page
            .getByRole('region', { name: 'Connectors' })
            .getByText('1 paused connection is not counted here.', { exact: false }),
        );
        await status.getByRole('link', { name: 'Resume it on the Connections page' }).click();
        await page.waitForURL((url) => url.pathname === '/connections');
        await assertNoSeriousViolations(page, 'connections after the overview');
        await page.goBack();
        await visible(status);
        await screenshot(page, 'overview-paused');
        await assertNoSeriousViolations(page, 'the overview with a paused connection');
        assertNoPageErrors(tp, 'the overview with a paused connection');
      } finally {
        await tp.close();
      }
    },
  );
});
