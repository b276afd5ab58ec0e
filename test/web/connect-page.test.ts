import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  assertNoPageErrors,
  assertNoSeriousViolations,
  browserSkipReason,
  eventually,
  hasFocus,
  launchBrowser,
  newPage,
  screenshot,
  startUiHarness,
  visible,
  WAIT_MS,
  type UiHarness,
} from '../helpers/browser.js';
import { assertNoLeak, makeSignedInTenant } from '../helpers/factories.js';
import type { TestSession } from '../helpers/harness.js';
import { registerProvider, startOAuthProvider } from '../helpers/oauth-provider.js';
import { startReceiver } from '../helpers/receiver.js';

// The connect page (contract §20, docs/api/connect-links.md) walked by a person with no hubgate account:
// a link made by the platform opens under the tenant's branding, its code leaves the address bar, the
// fields the link fixed are not asked, a refused URL is said on its field, a real local receiver gets
// the connection's test event, and the link once used says so in words. Also the page's return from an
// OAuth2 provider (`?status=completed`, `?authorizationError=…`), an end user completing an OAuth2 link
// at a real provider (oidc-provider on 127.0.0.1, which signs in and consents at once), a refusal there
// and Try again, and a throttled address. Skipped test by test when Chromium is missing.
const skip = browserSkipReason();

// Receivers listen on 127.0.0.1, opened by DELIVERY_ALLOWED_CIDRS; 10.0.0.0/8 stays refused.
const ENV = { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' };

/** A small SVG mark: hubgate's pages show a `data:` logo (decision 0074). */
const LOGO =
  'data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHdpZHRoPSI0MCIgaGVpZ2h0PSI0MCIgdmlld0JveD0iMCAwIDQwIDQwIj48cmVjdCB3aWR0aD0iNDAiIGhlaWdodD0iNDAiIHJ4PSI5IiBmaWxsPSIjZmZkNDAwIi8+PHBhdGggZD0iTTExIDI5IDIwIDEwbDkgMTloLTVsLTQtOS00IDl6IiBmaWxsPSIjMWIxZjI0Ii8+PC9zdmc+';
const USED = 'This link has been used, has expired or was withdrawn. Ask for a new one.';

/** axe finds nothing at all on the page, of any impact (each run is also written to screenshots/a11y/). */
async function axeClean(page: Page, label: string): Promise<void> {
  const record = await assertNoSeriousViolations(page, label);
  assert.deepEqual(record.violations, [], `${label}: accessibility violations`);
}

interface Link {
  id: string;
  url: string;
  status: string;
  connectionId: string | null;
}

describe('connect page', () => {
  let h: UiHarness;
  let browser: Browser;
  before(async () => {
    if (skip) return;
    browser = await launchBrowser();
    h = await startUiHarness({ env: ENV, workers: { pollMs: 100 } });
  });
  after(async () => {
    await browser?.close();
    await h?.close();
  });

  /** A tenant with branding set by the platform, and its admin's session for the API checks. */
  async function brandedTenant(branding: Record<string, string | null>) {
    const { tenant, session } = await makeSignedInTenant(h);
    const saved = await h.request('PUT', `/api/v1/platform/tenants/${tenant.id}/portal-settings`, {
      token: h.platformToken,
      body: { frameAncestors: [], branding: { name: null, logoUrl: null, accentColor: null, ...branding } },
    });
    assert.equal(saved.status, 200, `saving the branding answered ${saved.status}: ${saved.text}`);
    return { tenant, session };
  }

  /** A webhook link made with the platform key; the receiver URL is left to the person. */
  async function webhookLink(tenantId: string, fixed: Record<string, unknown> = {}): Promise<Link> {
    const made = await h.request<Link>('POST', `/api/v1/platform/tenants/${tenantId}/connect-sessions`, {
      token: h.platformToken,
      body: { connectorKey: 'webhook', subject: 'customer-42', config: fixed },
    });
    assert.equal(made.status, 201, `making the link answered ${made.status}: ${made.text}`);
    return made.body;
  }

  /** A link for the OAuth2 connector of the provider `key`: the person signs in there. */
  async function oauthLink(tenantId: string, key: string): Promise<Link> {
    const made = await h.request<Link>('POST', `/api/v1/platform/tenants/${tenantId}/connect-sessions`, {
      token: h.platformToken,
      body: { connectorKey: `oauth2:${key}`, subject: 'customer-7' },
    });
    assert.equal(made.status, 201, `making the OAuth2 link answered ${made.status}: ${made.text}`);
    return made.body;
  }

  const linkNow = async (tenantId: string, id: string) =>
    (
      await h.request<Link>('GET', `/api/v1/platform/tenants/${tenantId}/connect-sessions/${id}`, {
        token: h.platformToken,
      })
    ).body;

  const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name, exact: true });

  test(
    'a person with no account completes a webhook link; the link then says it was used',
    { skip, timeout: 180_000 },
    async (t) => {
      const receiver = await startReceiver(t);
      // A light yellow reads on neither surface: the page darkens it in light and keeps it in dark.
      const { tenant, session } = await brandedTenant({
        name: 'Acme Payroll',
        logoUrl: LOGO,
        accentColor: '#ffd400',
      });
      const link = await webhookLink(tenant.id, { eventTypes: ['invoice.*'] });
      const code = new URL(link.url).hash.replace('#code=', '');
      assert.equal(link.url, `${h.uiUrl}/connect/${tenant.id}#code=${code}`, 'the link is not the page');

      const served = await h.request('GET', `/connect/${tenant.id}`);
      assert.equal(served.status, 200, 'the connect page is not served');
      assert.match(served.headers.get('content-type') ?? '', /^text\/html/, 'the connect page is not the UI');
      assert.equal(served.headers.get('x-frame-options'), 'DENY', 'the connect page may be framed');
      assert.match(
        served.headers.get('content-security-policy') ?? '',
        /frame-ancestors 'none'/,
        'the connect page may be framed',
      );

      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      try {
        await page.goto(link.url);
        await visible(heading(page, 'Connect Webhook'));
        // The heading takes the focus as the stage appears (an effect, just after it is painted).
        await eventually(async () =>
          assert.ok(await hasFocus(heading(page, 'Connect Webhook')), 'the heading does not take the focus'),
        );
        await eventually(() =>
          assert.equal(page.url(), `${h.uiUrl}/connect/${tenant.id}`, 'the code stayed in the address bar'),
        );
        assert.ok(!page.url().includes(code), 'the code stayed in the address bar');
        await visible(page.getByText('Acme Payroll', { exact: true }));
        assert.equal(await page.locator(`img[src="${LOGO}"]`).count(), 1, 'the logo is not shown');
        assert.equal(await page.title(), 'Connect · Acme Payroll', 'the tab does not name the tenant');
        await visible(page.getByText('Acme Payroll asks you to connect Webhook.', { exact: false }));
        assert.equal(await page.getByLabel(/^Event types/).count(), 0, 'a field the link fixed is asked');
        assert.equal(await page.getByRole('link').count(), 0, 'the page offers links of the tenant UI');
        const button = page.getByRole('button', { name: 'Connect', exact: true });
        const accent = await button.evaluate('(element) => getComputedStyle(element).backgroundColor');
        assert.notEqual(accent, 'rgb(35, 84, 214)', "the tenant's accent is not applied");
        await axeClean(page, 'connect page form');
        await page.emulateMedia({ colorScheme: 'dark' });
        await axeClean(page, 'connect page form in dark');
        await page.emulateMedia({ colorScheme: 'light' });

        await page.setViewportSize({ width: 390, height: 844 });
        const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
        assert.ok(width <= 390, `the connect page is ${width} px wide on a 390 px screen`);
        await screenshot(page, 'connect-page-390');

        // An address the policy refuses is said on its field, which takes the focus.
        const url = page.getByLabel('Receiver URL');
        await url.fill('http://10.20.30.40/hook');
        await button.click();
        await visible(page.getByText('hubgate does not send to this address', { exact: false }));
        await eventually(async () => assert.ok(await hasFocus(url), 'the refused field has no focus'));
        assert.equal(await url.getAttribute('aria-invalid'), 'true', 'the refused field is not marked');
        await axeClean(page, 'connect page with a refused field');
        assert.equal(
          (await linkNow(tenant.id, link.id)).status,
          'pending',
          'a refused complete used the link',
        );

        await url.fill(receiver.url('/hook'));
        await page.getByLabel('Name of the connection (optional)').fill('Payroll events');
        await button.click();
        await visible(heading(page, 'Connected'));
        await visible(page.getByText('Webhook is connected to Acme Payroll. You can close this page.'));
        await eventually(async () =>
          assert.ok(await hasFocus(heading(page, 'Connected')), 'the Connected heading has no focus'),
        );
        const width2 = (await page.evaluate('document.documentElement.scrollWidth')) as number;
        assert.ok(width2 <= 390, `the connected page is ${width2} px wide on a 390 px screen`);
        await axeClean(page, 'connect page connected');
        await screenshot(page, 'connect-page-connected-390');
        assertNoPageErrors(tp, 'the connect page');

        const done = await linkNow(tenant.id, link.id);
        assert.equal(done.status, 'completed', 'the link is not completed');
        assert.match(done.connectionId ?? '', /^con_/, 'the completed link names no connection');
        await receivesTestEvent(done.connectionId ?? '', session, receiver);
      } finally {
        await tp.close();
      }

      // The same link opened again, in another tab.
      const again = await newPage(browser);
      try {
        again.page.setDefaultTimeout(WAIT_MS);
        await again.page.goto(link.url);
        await visible(heading(again.page, 'This link no longer works'));
        await visible(again.page.getByText(USED, { exact: true }));
        assert.equal(
          again.page.url(),
          `${h.uiUrl}/connect/${tenant.id}`,
          'the code stayed in the address bar',
        );
        await axeClean(again.page, 'connect page used link');
        assert.ok(!again.page.url().includes('sign-in'), 'a used link sends the person to sign-in');
        assertNoPageErrors(again, 'the used link');
      } finally {
        await again.close();
      }
      // In the link's create answer once, in no log.
      assertNoLeak(h, [], [code]);
    },
  );

  /** The connection the page made delivers: its test event reaches the receiver the person typed. */
  async function receivesTestEvent(
    connectionId: string,
    session: TestSession,
    receiver: Awaited<ReturnType<typeof startReceiver>>,
  ) {
    const connection = await h.request('GET', `/api/v1/integrations/connections/${connectionId}`, {
      session,
    });
    assert.equal(connection.body.displayName, 'Payroll events', 'the name given is not the connection’s');
    assert.deepEqual(
      connection.body.config,
      // The delivery order starts at its default, as the create form's does.
      { url: receiver.url('/hook'), eventTypes: ['invoice.*'], ordering: 'none' },
      'the connection has other settings than the page and the link gave',
    );
    assert.equal(connection.body.credentialsBound, true, 'the signing secret was not generated');
    const sent = await h.request('POST', `/api/v1/integrations/connections/${connectionId}/test`, {
      session,
      body: {},
    });
    assert.equal(sent.status, 202, `the test event answered ${sent.status}: ${sent.text}`);
    const [delivery] = await receiver.waitFor(1, WAIT_MS);
    assert.match(String(delivery?.headers['webhook-signature']), /^v1,/, 'the delivery is not signed');
  }

  test(
    'coming back from an OAuth2 provider: a refusal in words with Try again, then Connected',
    { skip, timeout: 120_000 },
    async (t) => {
      const receiver = await startReceiver(t);
      const { tenant } = await brandedTenant({ name: 'Acme Payroll', accentColor: '#0a7cff' });
      const link = await webhookLink(tenant.id);
      const code = new URL(link.url).hash.replace('#code=', '');
      const page0 = `${h.uiUrl}/connect/${tenant.id}`;
      const tp = await newPage(browser, { colorScheme: 'dark' });
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      try {
        // Nothing kept in this tab: the words, and to open the link again.
        await page.goto(`${page0}?authorizationError=${encodeURIComponent('<b>The provider said no.</b>')}`);
        await visible(heading(page, 'Not connected'));
        await visible(page.getByText('<b>The provider said no.</b>', { exact: false }));
        await visible(page.getByText('To try again, open the link you were given once more.'));
        assert.equal(
          await page.getByRole('button', { name: 'Try again' }).count(),
          0,
          'Try again is offered with no code kept',
        );
        await axeClean(page, 'connect page refused without the code');

        // What the page keeps before it leaves for the provider: the code, what was sent, what it showed.
        const key = JSON.stringify(`hubgate.connect.${tenant.id}`);
        const kept = JSON.stringify({
          code,
          tenantName: 'Acme Ltd',
          connectorName: 'Webhook',
          branding: { name: 'Acme Payroll', logoUrl: null, accentColor: '#0a7cff' },
          config: { url: receiver.url('/again') },
        });
        await page.evaluate(`window.sessionStorage.setItem(${key}, ${JSON.stringify(kept)})`);
        await page.reload();
        await visible(heading(page, 'Not connected'));
        await visible(page.getByText('Acme Payroll', { exact: true }));
        await axeClean(page, 'connect page refused with Try again');
        await page.getByRole('button', { name: 'Try again' }).click();
        await visible(heading(page, 'Connected'));
        await visible(page.getByText('Webhook is connected to Acme Payroll.', { exact: false }));
        const stored = await page.evaluate(`window.sessionStorage.getItem(${key})`);
        assert.equal(stored, null, 'the code stays kept once the link is completed');
        const done = await linkNow(tenant.id, link.id);
        assert.equal(done.status, 'completed', 'Try again did not complete the link');

        // The callback's success: Connected, whatever this tab kept.
        await page.goto(`${page0}?status=completed`);
        await visible(heading(page, 'Connected'));
        await visible(page.getByText('The connection is made. You can close this page.'));
        await axeClean(page, 'connect page back from the provider');
        assertNoPageErrors(tp, 'the return from the provider');
      } finally {
        await tp.close();
      }
    },
  );

  test(
    'an end user completes an OAuth2 link at the provider, and a refusal there offers Try again',
    { skip, timeout: 180_000 },
    async (t) => {
      const idp = await startOAuthProvider(t, { redirectUri: `${h.uiUrl}/api/v1/oauth/callback` });
      const provider = await registerProvider(h, idp);
      const { tenant, session } = await brandedTenant({ name: 'Acme Payroll', accentColor: '#0a7cff' });
      const link = await oauthLink(tenant.id, provider.key);
      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      try {
        // The provider signs the person in and consents at once; its callback comes back to the page.
        await page.goto(link.url);
        await visible(heading(page, 'Connect Test IdP'));
        await axeClean(page, 'connect page oauth form');
        await page.getByRole('button', { name: 'Connect', exact: true }).click();
        await page.waitForURL(
          (url) => url.pathname === `/connect/${tenant.id}` && url.searchParams.get('status') === 'completed',
        );
        await visible(heading(page, 'Connected'));
        await visible(page.getByText('Test IdP is connected to Acme Payroll. You can close this page.'));
        await axeClean(page, 'connect page oauth connected');
        const done = await linkNow(tenant.id, link.id);
        assert.equal(done.status, 'completed', 'the OAuth2 link is not completed');
        const connection = await h.request('GET', `/api/v1/integrations/connections/${done.connectionId}`, {
          session,
        });
        assert.equal(connection.body.authorization?.status, 'authorized', 'the connection is not authorized');
        assert.equal(
          await page.evaluate(
            `window.sessionStorage.getItem(${JSON.stringify(`hubgate.connect.${tenant.id}`)})`,
          ),
          null,
          'the code stays kept once the link is completed',
        );

        // Another link: the person refuses at the provider (the helper's refusal, its URL caught on the
        // way), comes back to the words and Try again, which goes to the provider again.
        const second = await oauthLink(tenant.id, provider.key);
        let atProvider = '';
        await page.route(`${idp.issuer}/**`, async (route) => {
          atProvider = route.request().url();
          await route.fulfill({ status: 200, contentType: 'text/html', body: '<title>Test IdP</title>' });
        });
        await page.goto(second.url);
        await visible(heading(page, 'Connect Test IdP'));
        await page.getByRole('button', { name: 'Connect', exact: true }).click();
        await eventually(() => assert.ok(atProvider, 'the page did not go to the provider'));
        // Its navigation there ends first: a goto started before would be interrupted by it.
        await page.waitForURL((url) => url.href.startsWith(idp.issuer));
        const refused = await idp.authorize(atProvider, { deny: true });
        await page.goto(refused.href);
        await page.waitForURL(
          (url) => url.pathname === `/connect/${tenant.id}` && url.searchParams.has('authorizationError'),
        );
        await visible(heading(page, 'Not connected'));
        // The callback's words, as the page got them.
        await visible(page.getByRole('alert').getByText(/access_denied/));
        await axeClean(page, 'connect page oauth refused');
        await screenshot(page, 'connect-page-oauth-refused');
        atProvider = '';
        await page.getByRole('button', { name: 'Try again' }).click();
        await eventually(() => assert.ok(atProvider, 'Try again did not go to the provider'));
        await page.waitForURL((url) => url.href.startsWith(idp.issuer));
        const granted = await idp.authorize(atProvider);
        await page.unroute(`${idp.issuer}/**`);
        await page.goto(granted.href);
        await page.waitForURL((url) => url.searchParams.get('status') === 'completed');
        await visible(heading(page, 'Connected'));
        assert.equal(
          (await linkNow(tenant.id, second.id)).status,
          'completed',
          'Try again completed nothing',
        );
        assertNoPageErrors(tp, 'the OAuth2 connect page');
      } finally {
        await tp.close();
      }
      assertNoLeak(h, [idp.clientSecret]);
    },
  );

  test(
    'a link without its code, and a throttled address, are said in words',
    { skip, timeout: 120_000 },
    async () => {
      const { tenant } = await brandedTenant({});
      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      try {
        await page.goto(`${h.uiUrl}/connect/${tenant.id}`);
        await visible(heading(page, 'This link is incomplete'));
        assert.ok(!page.url().includes('sign-in'), 'the page sends a person without an account to sign-in');
        await axeClean(page, 'connect page without a code');

        // Wrong codes from this address until it is throttled (a used link counts as one too).
        for (let tries = 0; ; tries += 1) {
          assert.ok(tries < 20, 'wrong codes are never throttled');
          const wrong = await h.request('POST', '/api/v1/connect/session', {
            body: { code: 'x'.repeat(32) },
          });
          if (wrong.status === 429) break;
          assert.equal(wrong.status, 401, `a wrong code answered ${wrong.status}`);
        }
        await page.goto(`${h.uiUrl}/connect/${tenant.id}#code=${'A'.repeat(32)}`);
        await visible(heading(page, 'The link could not be opened'));
        await visible(page.getByText(/Too many requests\. Try again in \d+ minutes?\./));
        await axeClean(page, 'connect page throttled');
        assertNoPageErrors(tp, 'the throttled page');
      } finally {
        await tp.close();
      }
    },
  );
});
