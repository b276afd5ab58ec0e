import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  assertNoPageErrors,
  assertNoSeriousViolations,
  browserSkipReason,
  launchBrowser,
  newPage,
  screenshot,
  startUiHarness,
  visible,
  WAIT_MS,
  type UiHarness,
} from '../helpers/browser.js';
import { makeTenant, makeUser } from '../helpers/factories.js';
import { kerberosSkipReason, startKdc, useKerberosEnv, type Kdc, type KerberosEnv } from '../helpers/kdc.js';

// "Sign in with SSO" in the web UI (docs/operators/sso.md, docs/operators/web-ui.md), with a real Kerberos realm and Chromium
// negotiating for real: Chromium loads the MIT GSSAPI library itself and reads the realm's krb5.conf
// and the person's credential cache from its environment, and it negotiates only with the hosts of
// --auth-server-allowlist (as a company's browser policy would set). Skipped test by test when
// Chromium or the Kerberos tools are missing.
const skip = browserSkipReason() ?? kerberosSkipReason();

/** What the profile says the session was signed in with. */
async function signedInWith(page: Page, uiUrl: string): Promise<string> {
  await page.goto(`${uiUrl}/profile`);
  const method = page.locator('dt', { hasText: 'Signed in with' }).locator('+ dd');
  await visible(method);
  return (await method.textContent()) ?? '';
}

/**
 * Chromium allowed to negotiate with localhost (`--auth-server-allowlist`, as a company's browser
 * policy would set), holding the tickets of `env`'s credential cache.
 *
 * On Linux, Chromium loads the GSSAPI library only once its profile has seen a Negotiate challenge
 * (the Local State preference `net.received_http_auth_negotiate_headers`, set by the first one, which
 * restarts the network service outside its sandbox): a new profile refuses its first challenge as an
 * unsupported scheme, and only the next attempt negotiates. The profile starts as one that has seen
 * one, like the browser of anyone who has used single sign-on before.
 */
const negotiatingBrowser = (env: Pick<KerberosEnv, 'KRB5_CONFIG' | 'KRB5CCNAME'>): Promise<Browser> =>
  launchBrowser({
    args: ['--auth-server-allowlist=localhost'],
    env: { KRB5_CONFIG: env.KRB5_CONFIG, KRB5CCNAME: env.KRB5CCNAME },
    localState: { net: { received_http_auth_negotiate_headers: true } },
  });

const ssoButton = (page: Page) => page.getByRole('button', { name: 'Sign in with SSO' });

/** Opens sign-in and waits for the answer about sign-in methods, which decides whether SSO shows. */
async function openSignIn(page: Page, url: string): Promise<void> {
  const methods = page.waitForResponse((response) => response.url().endsWith('/api/v1/auth/methods'));
  await page.goto(url);
  assert.equal((await methods).status(), 200, 'the sign-in page could not learn the sign-in methods');
  await visible(page.getByRole('heading', { level: 1, name: 'Sign in' }));
}

describe('single sign-on in the web UI', () => {
  let kdc: Kdc;
  let restoreEnv: (() => void) | undefined;
  /** The app with SSO on (a keytab with HTTP/localhost); `off` is one without. */
  let h: UiHarness;
  let off: UiHarness;
  let alice: KerberosEnv;
  let bob: KerberosEnv;

  before(async () => {
    if (skip) return;
    kdc = await startKdc({ users: { alice: 'alice-password', bob: 'bob-password' } });
    alice = (await kdc.kinit('alice')).env;
    // bob has a ticket of the company's realm but no account in hubgate.
    bob = (await kdc.kinit('bob')).env;
    // The app's acceptor runs in this process: the MIT library reads krb5.conf from its environment.
    restoreEnv = useKerberosEnv(kdc.env);
    h = await startUiHarness({
      env: { SSO_SPNEGO_KEYTAB: kdc.keytab, SSO_SPNEGO_EMAIL_DOMAIN: 'example.com' },
    });
    const tenant = await makeTenant(h, { entitlements: ['integrations'] });
    await makeUser(h, tenant.id, { email: 'alice@example.com' });
    off = await startUiHarness();
  });

  after(async () => {
    await h?.close();
    await off?.close();
    restoreEnv?.();
    await kdc?.stop();
  });

  test('the button shows only where single sign-on is on', { skip, timeout: 120_000 }, async () => {
    const browser = await launchBrowser();
    try {
      const tp = await newPage(browser);
      await openSignIn(tp.page, `${off.uiUrl}/sign-in`);
      await visible(tp.page.getByRole('button', { name: 'Sign in with a passkey' }));
      assert.equal(await ssoButton(tp.page).count(), 0, 'no SSO button when SSO is off');

      await openSignIn(tp.page, `${h.uiUrl}/sign-in`);
      await visible(ssoButton(tp.page));
      assertNoPageErrors(tp, 'sso: button');

      // A browser without passkeys has no "or" from the passkey part: the SSO part brings one.
      const noPasskeys = await newPage(browser);
      await noPasskeys.context.addInitScript('delete window.PublicKeyCredential;');
      await openSignIn(noPasskeys.page, `${h.uiUrl}/sign-in`);
      await visible(noPasskeys.page.getByText('This browser cannot use passkeys.'));
      await visible(ssoButton(noPasskeys.page));
      assert.equal(
        await noPasskeys.page.getByText('or', { exact: true }).count(),
        1,
        'the sign-in page without passkeys shows "or" other than once',
      );
      await screenshot(noPasskeys.page, 'sign-in-sso-no-passkeys');
      assertNoPageErrors(noPasskeys, 'sso: no passkeys');
    } finally {
      await browser.close();
    }
  });

  test(
    'a browser with a ticket signs in with one click and lands on the page it was going to',
    { skip, timeout: 120_000 },
    async () => {
      const browser = await negotiatingBrowser(alice);
      try {
        const tp = await newPage(browser);
        const { page } = tp;
        await openSignIn(page, `${h.uiUrl}/sign-in?next=${encodeURIComponent('/connections?status=ACTIVE')}`);
        await visible(ssoButton(page));
        await assertNoSeriousViolations(page, 'sign-in with SSO');
        await screenshot(page, 'sign-in-sso');

        await ssoButton(page).click();
        await page.waitForURL((url) => url.pathname === '/connections', { timeout: WAIT_MS });
        assert.equal(new URL(page.url()).search, '?status=ACTIVE', 'the query of `next` survives');
        await visible(page.getByRole('heading', { level: 1, name: 'Connections' }));
        assert.equal(
          await signedInWith(page, h.uiUrl),
          'Single sign-on (Kerberos)',
          'the connections page does not say the session began with SSO',
        );
        assertNoPageErrors(tp, 'sso: signed in');
      } finally {
        await browser.close();
      }
    },
  );

  test(
    'a browser that may not negotiate comes back to sign-in with the reason, and can still use a password',
    { skip, timeout: 120_000 },
    async () => {
      // The default browser: localhost is not on its allowlist for integrated authentication.
      const browser = await launchBrowser();
      try {
        const tp = await newPage(browser);
        const { page } = tp;
        await openSignIn(page, `${h.uiUrl}/sign-in?next=/connections`);
        await ssoButton(page).click();
        // Where the person was going comes back with the reason.
        await page.waitForURL(
          (url) =>
            url.pathname === '/sign-in' &&
            url.searchParams.get('sso') === 'unavailable' &&
            url.searchParams.get('next') === '/connections',
          { timeout: WAIT_MS },
        );
        const notice = page.getByRole('status').filter({ hasText: 'Single sign-on did not happen.' });
        await visible(notice);
        assert.match(
          (await notice.textContent()) ?? '',
          /did not offer a Kerberos ticket.*signed in to your company’s domain.*integrated authentication.*IT department.*try once more/,
          'the SSO notice does not explain why no ticket was offered and what to do',
        );
        await visible(ssoButton(page));
        await assertNoSeriousViolations(page, 'sign-in SSO unavailable');
        await screenshot(page, 'sign-in-sso-unavailable');

        // The other ways in still work from here.
        await page.getByLabel('E-mail address').fill('alice@example.com');
        await page.getByLabel('Password', { exact: true }).fill('correct horse battery staple');
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await page.waitForURL((url) => url.pathname === '/connections', { timeout: WAIT_MS });
        assert.equal(
          await signedInWith(page, h.uiUrl),
          'E-mail and password',
          'the password sign-in after SSO failed does not say it was a password',
        );
        assertNoPageErrors(tp, 'sso: unavailable');
      } finally {
        await browser.close();
      }
    },
  );

  test(
    'a browser allowed to negotiate but without a ticket gets the same reason',
    { skip, timeout: 120_000 },
    async () => {
      // Allowed for integrated authentication, but nobody signed in to the domain: an empty cache.
      const browser = await negotiatingBrowser({
        ...alice,
        KRB5CCNAME: `FILE:${join(kdc.dir, 'no-ccache')}`,
      });
      try {
        const tp = await newPage(browser);
        await openSignIn(tp.page, `${h.uiUrl}/sign-in`);
        await ssoButton(tp.page).click();
        await tp.page.waitForURL((url) => url.searchParams.get('sso') === 'unavailable', {
          timeout: WAIT_MS,
        });
        await visible(tp.page.getByRole('status').filter({ hasText: 'Single sign-on did not happen.' }));
        assertNoPageErrors(tp, 'sso: no ticket');
      } finally {
        await browser.close();
      }
    },
  );

  test(
    'a ticket for someone without an account here is refused in words',
    { skip, timeout: 120_000 },
    async () => {
      const browser = await negotiatingBrowser(bob);
      try {
        const tp = await newPage(browser);
        const { page } = tp;
        await openSignIn(page, `${h.uiUrl}/sign-in`);
        await ssoButton(page).click();
        await page.waitForURL((url) => url.searchParams.get('sso') === 'refused', { timeout: WAIT_MS });
        const notice = page.getByRole('status').filter({ hasText: 'Single sign-on did not sign you in.' });
        await visible(notice);
        assert.match(
          (await notice.textContent()) ?? '',
          /no account for your company login.*administrator/,
          'the SSO refusal does not say there is no account for the login',
        );
        await assertNoSeriousViolations(page, 'sign-in SSO refused');
        await screenshot(page, 'sign-in-sso-refused');
        assertNoPageErrors(tp, 'sso: refused');
      } finally {
        await browser.close();
      }
    },
  );
});
