import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Frame, Locator, Page } from 'playwright-core';
import {
  assertNoPageErrors,
  assertNoSeriousViolations,
  browserSkipReason,
  gone,
  launchBrowser,
  newPage,
  screenshot,
  startUiHarness,
  WAIT_MS,
  type UiHarness,
} from '../helpers/browser.js';
import { publishEvent } from '../helpers/events.js';
import { makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { framingSite } from '../helpers/framing-site.js';
import type { TestSession } from '../helpers/harness.js';
import { registerProvider, startOAuthProvider, type TestOAuthProvider } from '../helpers/oauth-provider.js';
import { CONNECTIONS, pause, readConnection, resume } from '../helpers/operate.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';

// The portal page (docs/api/portal.md) as the platform's customer sees it: framed by the platform's
// own site on another origin, in a browser that blocks third-party cookies, with the tenant's
// branding and the session's connections only, and nothing else of hubgate; what its access allows
// and no more; phone width; what changes elsewhere (the tenant's API, hubgate itself) and its end
// said on the open page, with no reload, when the session is ended elsewhere. Real app, real receiver, Chromium; the framing site is a second server on 127.0.0.1.
const skip = browserSkipReason();
const ENV = { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' };
const PHONE = { width: 390, height: 844 };
const shown = (locator: Locator) => locator.first().waitFor({ state: 'visible', timeout: WAIT_MS });
// A 1×1 PNG: the smallest logo a tenant can give as a data: URL.
const LOGO =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('the portal page', () => {
  let h: UiHarness;
  let browser: Browser;
  let site: Awaited<ReturnType<typeof framingSite>>;
  let receiver: Receiver;
  let tenantId: string;
  let admin: TestSession;
  let listed: { id: string };
  let idp: TestOAuthProvider;
  const closing: Array<() => unknown> = [];

  before(async () => {
    if (skip) return;
    // Third-party cookies blocked, as Chromium does when their phase-out is on.
    browser = await launchBrowser({ args: ['--test-third-party-cookie-phaseout'] });
    h = await startUiHarness({ env: ENV, workers: { pollMs: 100 } });
    site = await framingSite();
    idp = await startOAuthProvider(
      { after: (fn) => closing.push(fn) },
      { redirectUri: `${h.uiUrl}/api/v1/oauth/callback` },
    );
    receiver = await startReceiver();
    const made = await makeSignedInTenant(h);
    tenantId = made.tenant.id;
    admin = made.session;
    listed = await makeWebhookConnection(h, admin, receiver.url('/orders'), { displayName: 'Orders hook' });
    await makeWebhookConnection(h, admin, receiver.url('/billing'), {
      displayName: 'Billing hook',
    });
    await publishEvent(h, admin, { type: 'order.created', data: { order: 1 } });
    await receiver.waitFor(2, WAIT_MS);
    // The API admits https origins only; the site is plain http on loopback, so the row is written here.
    await h.database.kysely
      .insertInto('portal_settings')
      .values({
        tenant_id: tenantId,
        frame_ancestors: JSON.stringify([site.origin]),
        branding_name: 'Acme <b>Cloud</b>',
        branding_logo_url: LOGO,
        branding_accent_color: '#ffcc00',
        updated_at: new Date(),
      })
      .execute();
  });
  after(async () => {
    await browser?.close();
    await h?.close();
    site?.server.close();
    await receiver?.close();
    await Promise.all(closing.map((fn) => fn()));
  });

  async function mint(body: Record<string, unknown>): Promise<{ id: string; url: string }> {
    const r = await h.request('POST', `/api/v1/platform/tenants/${tenantId}/portal-sessions`, {
      token: h.platformToken,
      body: { subject: 'kim@customer.example', ...body },
    });
    assert.equal(r.status, 201, r.text);
    // The link names PUBLIC_URL; the browser opens the same page where the test serves it.
    const url = new URL(r.body.url as string);
    return { id: r.body.id as string, url: `${h.uiUrl}${url.pathname}${url.hash}` };
  }

  const portalFrame = (page: Page): Frame => {
    const frame = page.frames().find((f) => f !== page.mainFrame());
    assert.ok(frame, 'the platform page has no frame');
    return frame;
  };

  test(
    "framed by the platform's site with third-party cookies blocked: branded, its connections only, operate",
    { skip, timeout: 180_000 },
    async () => {
      const session = await mint({ access: 'operate', connectionIds: [listed.id] });
      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      try {
        // The UI is at localhost, the platform's site at 127.0.0.1: two sites, not only two origins.
        assert.match(session.url, /^http:\/\/localhost:/, 'the link is not at localhost');
        await page.goto(site.framing(session.url));
        const frame = portalFrame(page);
        await shown(frame.getByRole('heading', { level: 1, name: 'Connections' }));
        // The frame is another site's (localhost in a page of 127.0.0.1), and the browser blocks its
        // cookies and, with them, its storage: the page works from memory alone.
        const probe = await frame.evaluate(`(() => {
          document.cookie = 'probe=1; SameSite=None; Secure';
          document.cookie = 'lax=1';
          let storage = 'usable';
          try { sessionStorage.setItem('probe', '1'); } catch (error) { storage = String(error); }
          return { cookies: document.cookie, storage };
        })()`);
        const { cookies, storage } = probe as { cookies: string; storage: string };
        assert.equal(cookies, '', 'the framed page keeps cookies: third-party cookies are not blocked');
        assert.match(storage, /SecurityError/, 'the framed page may use sessionStorage');
        // The code left the address bar at once.
        assert.doesNotMatch(frame.url(), /code=/, 'the code is still in the frame’s address');
        // Branded (the name is text, not markup), and when the session ends.
        await shown(frame.getByText('Acme <b>Cloud</b>', { exact: true }));
        assert.equal(await frame.locator('.portal-bar b').count(), 0, 'the brand name was read as HTML');
        await shown(frame.getByText(/This session ends at/));
        // Its connections only, and nothing else of hubgate: no navigation, no sign-out, no create.
        await shown(frame.getByRole('link', { name: /Events of Orders hook/ }));
        await screenshot(page, 'portal-framed');
        assert.equal(await frame.getByText('Billing hook').count(), 0, 'an unlisted connection is shown');
        assert.equal(await frame.locator('nav').count(), 0, 'the portal shows a navigation');
        assert.equal(
          await frame.getByRole('button', { name: 'Sign out' }).count(),
          0,
          'the portal offers sign-out',
        );
        assert.equal(
          await frame.getByRole('link', { name: 'Create connection' }).count(),
          0,
          'the portal offers create to an operate session',
        );
        assert.equal(
          await frame.getByRole('button', { name: /credentials/i }).count(),
          0,
          'the portal offers credentials to an operate session',
        );
        assert.equal(
          await frame.getByRole('button', { name: 'Revoke' }).count(),
          0,
          'the portal offers revoke to an operate session',
        );

        // The event log, a test event, pause and resume: what `operate` allows.
        await frame.getByRole('link', { name: /Events of Orders hook/ }).click();
        await shown(frame.getByRole('heading', { level: 1, name: 'Orders hook' }));
        await shown(frame.getByRole('link', { name: /evt_/ }));
        await frame.getByRole('button', { name: 'Send test event' }).click();
        await shown(frame.getByText(/test event/i));
        await receiver.waitFor(3, WAIT_MS);
        await frame.getByRole('button', { name: 'Pause deliveries' }).click();
        await frame
          .getByRole('dialog')
          .getByRole('button', { name: /^Pause/ })
          .click();
        await shown(frame.getByRole('heading', { name: 'Deliveries are paused' }));
        await frame.getByRole('button', { name: 'Resume deliveries' }).first().click();
        await frame
          .getByRole('dialog')
          .getByRole('button', { name: /^Resume/ })
          .click();
        await shown(frame.getByText(/Deliveries to .* resumed/));
        // A delivery's detail.
        await frame.getByRole('link', { name: /evt_/ }).first().click();
        await shown(frame.getByRole('region', { name: 'Payload JSON' }));
        assertNoPageErrors(tp, 'the framed portal');

        // The changes are the portal's, with the session and its subject, in the tenant's audit log.
        const audit = await h.request('GET', '/api/v1/company/audit-log?limit=50', { session: admin });
        const paused = (audit.body.data as Array<Record<string, unknown>>).find(
          (e) => e.action === 'connection.pause',
        );
        assert.equal(paused?.actorType, 'portal', JSON.stringify(paused));

        // Ended by the platform: the open page says so by itself, on its next read.
        const ended = await h.request(
          'DELETE',
          `/api/v1/platform/tenants/${tenantId}/portal-sessions/${session.id}`,
          {
            token: h.platformToken,
          },
        );
        assert.equal(ended.status, 204, ended.text);
        await frame
          .getByRole('link', { name: /Orders hook/ })
          .first()
          .click();
        await shown(frame.getByRole('heading', { level: 1, name: 'This session has ended' }));
        await assertNoSeriousViolations(page, 'the ended portal');
      } finally {
        await tp.close();
      }
    },
  );

  test(
    'the open portal follows what changes elsewhere: a pause by the API, an automatic pause, a revoke, its end',
    { skip, timeout: 180_000 },
    async (t) => {
      // The receiver of "Gone hook" has gone away for good: its first delivery answers 410.
      const goneReceiver = await startReceiver(t, (_request, _index, response) => {
        response.statusCode = 410;
        response.end('gone');
      });
      const paused = await makeWebhookConnection(h, admin, receiver.url('/paused'), {
        displayName: 'Paused hook',
      });
      const goneHook = await makeWebhookConnection(h, admin, goneReceiver.url('/gone'), {
        displayName: 'Gone hook',
      });
      const session = await mint({ access: 'operate', connectionIds: [paused.id, goneHook.id] });
      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      const rowOf = (name: string) => page.getByRole('row').filter({ hasText: name });
      try {
        await page.goto(session.url);
        await shown(page.getByRole('heading', { level: 1, name: 'Connections' }));
        await shown(rowOf('Paused hook').getByText('Delivery enabled'));
        await shown(rowOf('Gone hook').getByText('Delivery enabled'));
        // Marks this document: a reload would make a new one without the mark.
        await page.evaluate('window.__sameDocument = true');

        // Paused by the tenant through the API, not on this page: the list shows it by itself.
        await pause(h, admin, paused.id);
        await shown(rowOf('Paused hook').getByText('Paused by hand'));
        await shown(rowOf('Paused hook').getByText('Paused', { exact: true }));

        // Paused by hubgate itself: the receiver answered 410 to the event's delivery.
        await publishEvent(h, admin, { type: 'order.created', data: { order: 2 } });
        await waitUntil(async () => (await readConnection(h, admin, goneHook.id)).pausedReason === 'gone', {
          message: 'the connection to be paused after the 410',
          timeoutMs: WAIT_MS,
        });
        await shown(rowOf('Gone hook').getByText('Receiver answered 410 Gone'));
        assert.equal(
          await page.evaluate('window.__sameDocument === true'),
          true,
          'the page was reloaded to show the pauses',
        );
        await assertNoSeriousViolations(page, 'the portal list with connections paused while open');
        await screenshot(page, 'portal-paused-while-open');

        // A connection's page follows too: resumed, then revoked, through the API.
        await page.getByRole('link', { name: /Events of Paused hook/ }).click();
        await shown(page.getByRole('heading', { level: 1, name: 'Paused hook' }));
        const banner = page.getByRole('region', { name: 'Deliveries are paused' });
        await shown(banner);
        await page.evaluate('window.__sameDocument = true');
        await resume(h, admin, paused.id);
        await gone(banner);
        await shown(page.getByRole('button', { name: 'Pause deliveries', exact: true }));
        const revoked = await h.request('POST', `${CONNECTIONS}/${paused.id}/revoke`, { session: admin });
        assert.equal(revoked.status, 200, revoked.text);
        await shown(page.getByRole('definition').filter({ hasText: 'Revoked' }));
        await gone(page.getByRole('button', { name: 'Pause deliveries', exact: true }));
        assert.equal(
          await page.evaluate('window.__sameDocument === true'),
          true,
          'the page was reloaded to show the resume and the revoke',
        );

        // Back on the list, the session ended by the platform: the page says so by itself, no click.
        await page.getByRole('link', { name: 'Connections' }).first().click();
        await shown(rowOf('Paused hook').getByText('Revoked', { exact: true }));
        const ended = await h.request(
          'DELETE',
          `/api/v1/platform/tenants/${tenantId}/portal-sessions/${session.id}`,
          { token: h.platformToken },
        );
        assert.equal(ended.status, 204, ended.text);
        await shown(page.getByRole('heading', { level: 1, name: 'This session has ended' }));
        assertNoPageErrors(tp, 'the portal following changes made elsewhere');
      } finally {
        await tp.close();
      }
    },
  );

  test('a link works once; another origin cannot frame the portal', { skip, timeout: 120_000 }, async () => {
    const session = await mint({ access: 'read' });
    const tp = await newPage(browser);
    const { page } = tp;
    page.setDefaultTimeout(WAIT_MS);
    try {
      await page.goto(session.url);
      await shown(page.getByRole('heading', { level: 1, name: 'Connections' }));
      // `read`: both connections (none named), no operating.
      await shown(page.getByRole('link', { name: /Events of Billing hook/ }));
      await page.getByRole('link', { name: /Events of Orders hook/ }).click();
      await shown(page.getByRole('heading', { level: 1, name: 'Orders hook' }));
      assert.equal(
        await page.getByRole('button', { name: 'Send test event' }).count(),
        0,
        'a read session is offered a test event',
      );
      assert.equal(
        await page.getByRole('button', { name: 'Pause deliveries' }).count(),
        0,
        'a read session is offered pause',
      );
      await assertNoSeriousViolations(page, 'the portal event log');
      // The same link again, in a new tab: used.
      const again = await newPage(browser);
      try {
        await again.page.goto(session.url);
        await shown(again.page.getByRole('heading', { level: 1, name: 'This link no longer works' }));
        await assertNoSeriousViolations(again.page, 'a used portal link');
      } finally {
        await again.close();
      }
    } finally {
      await tp.close();
    }
  });

  test(
    'at phone width, a managing session creates a connection; light and dark',
    { skip, timeout: 120_000 },
    async () => {
      const session = await mint({ access: 'manage', connectionIds: [listed.id] });
      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      await page.setViewportSize(PHONE);
      try {
        await page.goto(session.url);
        await shown(page.getByRole('heading', { level: 1, name: 'Connections' }));
        const width = await page.evaluate<number>('document.documentElement.scrollWidth');
        assert.ok(width <= PHONE.width, `the portal is ${width} px wide on a ${PHONE.width} px screen`);
        await assertNoSeriousViolations(page, 'the portal at phone width');
        await screenshot(page, 'portal-phone');
        await page.getByRole('link', { name: 'Create connection' }).first().click();
        await shown(page.getByRole('heading', { level: 1, name: /connection/i }));
        assert.match(
          page.url(),
          new RegExp(`/portal/${tenantId}/connections/new`),
          'the create page is not under the portal',
        );
        await assertNoSeriousViolations(page, 'the portal create page');
        assertNoPageErrors(tp, 'the portal at phone width');
      } finally {
        await tp.close();
      }
    },
  );
  test(
    'a managing session in a frame connects an OAuth2 connection in a new tab, and the frame follows',
    { skip, timeout: 180_000 },
    async () => {
      const provider = await registerProvider(h, idp, { name: 'Portal IdP' });
      const created = await h.request('POST', '/api/v1/integrations/connections', {
        session: admin,
        body: { connectorKey: provider.connectorKey, displayName: 'IdP API' },
      });
      assert.equal(created.status, 201, created.text);
      const connectionId = created.body.id as string;
      const session = await mint({ access: 'manage', connectionIds: [connectionId] });
      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      try {
        await page.goto(site.framing(session.url));
        const frame = portalFrame(page);
        await frame.getByRole('link', { name: /Details of IdP API/ }).click();
        await shown(frame.getByRole('heading', { level: 1, name: 'IdP API' }));
        // No word of the proxy: the portal's token does not reach it.
        assert.equal(
          await frame.getByRole('heading', { name: 'Using this connection' }).count(),
          0,
          'the proxy is offered',
        );
        // Connect opens the provider in a tab of its own; the provider signs in and consents at once,
        // and its callback comes back to the portal page there, with a code of the same session.
        const [tab] = await Promise.all([
          page.context().waitForEvent('page'),
          frame.getByRole('button', { name: 'Connect' }).click(),
        ]);
        await shown(frame.getByText(/Finish connecting to Portal IdP in the new tab/));
        await tab.waitForURL(
          new RegExp(`/portal/${tenantId}/connections/${connectionId}\\?authorized=true`),
          {
            timeout: WAIT_MS,
          },
        );
        await shown(tab.getByText(/Connected to Portal IdP/));
        assert.doesNotMatch(tab.url(), /code=/, 'the new code stayed in the address bar');
        // The framed page is still open (its token was not replaced), and reads the connection again
        // when it gets the focus back.
        // Headless Chromium sends no focus event when a tab comes back to the front: the test sends
        // the one a person's return to the tab gives.
        await page.bringToFront();
        await frame.evaluate(`window.dispatchEvent(new Event('focus'))`);
        await shown(frame.getByRole('button', { name: 'Authorize again' }));
        const audit = await h.request('GET', '/api/v1/company/audit-log?limit=50', { session: admin });
        const authorized = (audit.body.data as Array<Record<string, unknown>>).find(
          (e) => e.action === 'connection.authorize' && e.targetId === connectionId,
        );
        assert.equal(
          authorized?.actorType,
          'portal',
          `the authorization's audit entry: ${JSON.stringify(authorized)}`,
        );
        assertNoPageErrors(tp, 'the framed portal connecting OAuth2');
        await tab.close();
      } finally {
        await tp.close();
      }
    },
  );
});
