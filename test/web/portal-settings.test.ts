import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
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
import { makeSignedInTenant, makeUser } from '../helpers/factories.js';

// The settings page's Portal card (docs/operators/web-ui.md): a key manager sets the sites that may
// frame the portal and its branding, is told in words what is wrong, and the portal page's framing
// follows; a MEMBER is told who can. Skipped test by test when Chromium is missing.
const skip = browserSkipReason();

describe('portal settings page', () => {
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
    'a key manager saves framing and branding; a wrong origin is said on its line',
    { skip, timeout: 120_000 },
    async () => {
      const { tenant, user, session } = await makeSignedInTenant(h);
      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      try {
        await signInThroughUi(page, h.uiUrl, user, '/');
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
        await page.waitForURL((url) => url.pathname === '/settings');
        const card = page.getByRole('region', { name: 'Portal' });
        await visible(card);
        const origins = card.getByLabel('Sites that may frame the portal');
        await origins.fill('https://app.example.com\nhttp://old.example.com');
        await card.getByLabel('Name shown in the portal').fill('Acme Payroll');
        await card.getByLabel('Accent colour').fill('#0a7cff');
        await card.getByRole('button', { name: 'Save portal settings' }).click();
        await visible(card.getByText('Line 2 is not a site address hubgate can allow', { exact: false }));
        await eventually(async () =>
          assert.equal(await origins.getAttribute('aria-invalid'), 'true', 'the wrong list is not marked'),
        );
        await assertNoSeriousViolations(page, 'the portal card with an error');
        const unsaved = await h.request('GET', '/api/v1/company/portal-settings', { session });
        assert.deepEqual(unsaved.body.frameAncestors, [], 'a refused save wrote');

        await origins.fill('https://app.example.com\n\nhttps://admin.example.com:8443\n');
        await card.getByRole('button', { name: 'Save portal settings' }).click();
        await visible(card.getByText('Portal settings saved.', { exact: false }));
        assert.equal(
          await origins.inputValue(),
          'https://app.example.com\nhttps://admin.example.com:8443',
          'the list shown after saving is not the list saved',
        );
        const saved = await h.request('GET', '/api/v1/company/portal-settings', { session });
        assert.deepEqual(
          saved.body,
          {
            frameAncestors: ['https://app.example.com', 'https://admin.example.com:8443'],
            branding: { name: 'Acme Payroll', logoUrl: null, accentColor: '#0a7cff' },
          },
          'the page saved other settings than it showed',
        );
        const portal = await h.request('GET', `/portal/${tenant.id}`);
        assert.match(
          portal.headers.get('content-security-policy') ?? '',
          /frame-ancestors https:\/\/app\.example\.com https:\/\/admin\.example\.com:8443(;|$)/,
          'the portal page is not framed by the sites saved',
        );
        await page.setViewportSize({ width: 390, height: 800 });
        const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
        assert.ok(width <= 390, `the settings page is ${width} px wide on a 390 px screen`);
        await page.setViewportSize({ width: 1280, height: 800 });
        await screenshot(page, 'settings-portal');
        await assertNoSeriousViolations(page, 'the portal card saved');
        assertNoPageErrors(tp, 'the settings page');
      } finally {
        await tp.close();
      }
    },
  );

  test('a MEMBER has no Settings link, and the page says who can', { skip, timeout: 120_000 }, async () => {
    const { tenant } = await makeSignedInTenant(h);
    const member = await makeUser(h, tenant.id, { role: 'MEMBER' });
    const tp = await newPage(browser);
    const { page } = tp;
    page.setDefaultTimeout(WAIT_MS);
    try {
      await signInThroughUi(page, h.uiUrl, member, '/settings');
      await visible(page.getByText('cannot change your organization’s settings', { exact: false }));
      assert.equal(
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).count(),
        0,
        'a MEMBER is offered the settings page',
      );
      assert.equal(await page.getByRole('region', { name: 'Portal' }).count(), 0, 'a MEMBER sees the card');
      await assertNoSeriousViolations(page, 'the settings page for a MEMBER');
    } finally {
      await tp.close();
    }
  });
});
