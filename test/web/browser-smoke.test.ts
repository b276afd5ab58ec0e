import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import {
  assertNoPageErrors,
  assertNoSeriousViolations,
  browserSkipReason,
  checkAccessibility,
  launchBrowser,
  newPage,
  screenshot,
  startUiHarness,
  type UiHarness,
} from '../helpers/browser.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

// The browser-test machinery itself, on whatever page the UI serves at `/`: its headers, a cookie
// session as the UI will hold it, axe-core under the page's CSP, and screenshots. The UI's own pages
// are tested by flows written against them. Skipped test by test, not as a suite, so that the run's
// totals count them as skipped.
const skip = browserSkipReason();

describe('browser tests', () => {
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

  test('the page is served under a strict CSP, with a title, and logs no error', { skip }, async () => {
    const tp = await newPage(browser);
    try {
      const response = await tp.page.goto(`${h.uiUrl}/`);
      assert.ok(response, 'no response for the page');
      assert.equal(response.status(), 200, 'the UI page does not load');
      const headers = response.headers();
      const csp = headers['content-security-policy'];
      assert.ok(csp, 'no Content-Security-Policy header');
      assert.doesNotMatch(
        csp,
        /unsafe-inline|unsafe-eval/,
        "the page's CSP allows inline or evaluated scripts",
      );
      assert.match(csp, /script-src 'self'/, "the page's CSP does not limit scripts to its own origin");
      assert.equal(headers['x-frame-options'], 'DENY', 'the page may be framed by another site');
      await tp.page.waitForLoadState('networkidle');
      assert.notEqual((await tp.page.title()).trim(), '', 'the page has no <title>');
      assertNoPageErrors(tp, 'GET /');

      await assertNoSeriousViolations(tp.page, 'smoke home');
      const shots = await screenshot(tp.page, 'smoke-home');
      assert.ok(
        existsSync(shots.light) && existsSync(shots.dark),
        'the light and dark screenshots were not written',
      );
    } finally {
      await tp.close();
    }
  });

  test(
    'a CSP violation and an accessibility violation are caught, under the real CSP',
    { skip },
    async () => {
      const tp = await newPage(browser);
      try {
        await tp.page.goto(`${h.uiUrl}/`);
        // Inline script, refused by `script-src 'self'`: the collector must see the refusal.
        await tp.page.evaluate(`{
        const script = document.createElement('script');
        script.textContent = 'window.inlineRan = true';
        document.head.append(script);
        const image = document.createElement('img');
        image.src = 'data:image/gif;base64,R0lGODlhAQABAAAAACw=';
        document.body.append(image);
      }`);
        assert.equal(await tp.page.evaluate('window.inlineRan === true'), false, 'an inline script ran');
        await tp.page.waitForTimeout(100);
        assert.ok(
          tp.errors.some((e) => e.includes('Content Security Policy')),
          `the CSP violation was not collected: ${JSON.stringify(tp.errors)}`,
        );
        // axe runs although the page refuses inline scripts, and finds the image without a text.
        const violations = await checkAccessibility(tp.page);
        assert.ok(
          violations.some((v) => v.id === 'image-alt' && v.impact === 'critical'),
          `axe missed the image without alt: ${violations.map((v) => v.id).join(', ')}`,
        );
      } finally {
        await tp.close();
      }
    },
  );

  test(
    'Chromium keeps the Secure session cookies over http://localhost, and CSRF-checked requests work',
    { skip },
    async () => {
      const tenant = await makeTenant(h);
      const user = await makeUser(h, tenant.id);
      const tp = await newPage(browser);
      try {
        await tp.page.goto(`${h.uiUrl}/`);
        const call = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
          tp.page.evaluate(
            async ({ method, path, headers, body }) => {
              const response = await fetch(path, {
                method,
                headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
                body: body === undefined ? undefined : JSON.stringify(body),
              });
              const text = await response.text();
              return { status: response.status, body: text ? JSON.parse(text) : undefined };
            },
            { method, path, headers, body },
          );

        const signIn = await call(
          'POST',
          '/api/v1/auth/login',
          {},
          { email: user.email, password: user.password },
        );
        assert.equal(signIn.status, 200, JSON.stringify(signIn.body));
        const csrfToken: string = signIn.body.csrfToken;

        const cookies = await tp.context.cookies(h.uiUrl);
        const access = cookies.find((c) => c.name === 'svc_access');
        const csrf = cookies.find((c) => c.name === '__Host-svc_csrf');
        assert.ok(access, `svc_access was not kept: ${cookies.map((c) => c.name).join(', ')}`);
        assert.ok(csrf, `__Host-svc_csrf was not kept: ${cookies.map((c) => c.name).join(', ')}`);
        assert.deepEqual(
          { secure: access.secure, httpOnly: access.httpOnly, sameSite: access.sameSite, path: access.path },
          { secure: true, httpOnly: true, sameSite: 'Lax', path: '/' },
          'the session cookie is readable by scripts, sent over http, or scoped wrongly',
        );
        assert.deepEqual(
          { secure: csrf.secure, httpOnly: csrf.httpOnly, sameSite: csrf.sameSite, path: csrf.path },
          { secure: true, httpOnly: false, sameSite: 'Strict', path: '/' },
          'the CSRF cookie is hidden from scripts, sent over http, or scoped wrongly',
        );
        assert.equal(csrf.value, csrfToken, 'the CSRF cookie does not hold the CSRF token of the answer');
        // Scripts see the CSRF cookie, never the session's.
        const visible = String(await tp.page.evaluate('document.cookie'));
        assert.ok(visible.includes('__Host-svc_csrf=') && !visible.includes('svc_access'), visible);

        const session = await call('GET', '/api/v1/auth/session');
        assert.equal(session.status, 200, JSON.stringify(session.body));
        assert.equal(
          session.body.user.email,
          user.email,
          'the session from the cookie belongs to someone else',
        );

        const withoutToken = await call('POST', '/api/v1/auth/logout');
        assert.equal(withoutToken.status, 403, 'a logout without the CSRF token is not refused');
        assert.equal(
          withoutToken.body.code,
          'csrf_failed',
          'a logout without the CSRF token is refused for another reason than CSRF',
        );
        const logout = await call('POST', '/api/v1/auth/logout', { 'x-csrf-token': csrfToken });
        assert.equal(logout.status, 204, 'a logout with the CSRF token fails');
        assert.equal(
          (await call('GET', '/api/v1/auth/session')).status,
          401,
          'the session still works after logout',
        );
        assertNoPageErrors(tp, 'session calls');
      } finally {
        await tp.close();
      }
    },
  );

  test('a page opened at another origin than PUBLIC_URL cannot sign in', { skip }, async () => {
    const tenant = await makeTenant(h);
    const user = await makeUser(h, tenant.id);
    const tp = await newPage(browser);
    try {
      // Same server, but the browser sends Origin: http://127.0.0.1:<port>: why tests use uiUrl.
      await tp.page.goto(`${h.baseUrl}/`);
      const status = await tp.page.evaluate(
        async (body) =>
          (
            await fetch('/api/v1/auth/login', {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(body),
            })
          ).status,
        { email: user.email, password: user.password },
      );
      assert.equal(status, 403, 'a page at another origin can sign in');
    } finally {
      await tp.close();
    }
  });
});
