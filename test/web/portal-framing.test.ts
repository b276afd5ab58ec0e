import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Frame, Page } from 'playwright-core';
import {
  browserSkipReason,
  eventually,
  launchBrowser,
  newPage,
  startUiHarness,
  WAIT_MS,
  type UiHarness,
} from '../helpers/browser.js';
import { makeTenant } from '../helpers/factories.js';
import { framingSite } from '../helpers/framing-site.js';

// The portal page framed by real sites (docs/api/portal.md): Chromium shows it inside a page of an
// origin the tenant allows, and refuses it inside a page of any other origin; every other page of
// the UI is refused everywhere. Two servers on 127.0.0.1 with different ports are two origins. The
// API takes https origins only; these sites are plain http on loopback, so the test writes the row
// itself: what it checks is that the header hubgate sends does what it says in a browser.
const skip = browserSkipReason();

/** Whether the framed page ran: the UI's script renders its heading inside the frame. */
async function framedPageRan(page: Page): Promise<boolean> {
  const frame: Frame | undefined = page.frames().find((f) => f !== page.mainFrame());
  if (!frame || frame.url().startsWith('chrome-error:')) return false;
  return (await frame.locator('h1').count()) > 0;
}

describe('the portal page in a frame', () => {
  let h: UiHarness;
  let browser: Browser;
  let allowed: Awaited<ReturnType<typeof framingSite>>;
  let other: Awaited<ReturnType<typeof framingSite>>;
  before(async () => {
    if (skip) return;
    browser = await launchBrowser();
    h = await startUiHarness();
    allowed = await framingSite();
    other = await framingSite();
  });
  after(async () => {
    await browser?.close();
    await h?.close();
    allowed?.server.close();
    other?.server.close();
  });

  test(
    'shown by the allowed origin, refused by another, and no other page is shown by either',
    { skip, timeout: 120_000 },
    async () => {
      const tenant = await makeTenant(h);
      await h.database.kysely
        .insertInto('portal_settings')
        .values({
          tenant_id: tenant.id,
          frame_ancestors: JSON.stringify([allowed.origin]),
          branding_name: null,
          branding_logo_url: null,
          branding_accent_color: null,
          updated_at: new Date(),
        })
        .execute();
      const portal = `${h.uiUrl}/portal/${tenant.id}`;
      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      try {
        await page.goto(allowed.framing(portal));
        await eventually(async () =>
          assert.ok(await framedPageRan(page), 'the allowed origin cannot show the portal page'),
        );
        for (const [site, src, what] of [
          [other, portal, 'another origin shows the portal page'],
          [allowed, `${h.uiUrl}/`, 'the allowed origin shows another page of the UI'],
          [allowed, `${h.uiUrl}/connect/${tenant.id}`, 'the allowed origin shows the connect page'],
        ] as const) {
          await page.goto(site.framing(src));
          // A refused frame never runs the page: give it the time an allowed one took, and more.
          await new Promise((resolve) => setTimeout(resolve, 1_500));
          assert.equal(await framedPageRan(page), false, what);
        }
      } finally {
        await tp.close();
      }
    },
  );
});
