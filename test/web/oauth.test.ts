import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  assertNoPageErrors,
  assertNoSeriousViolations,
  browserSkipReason,
  gone,
  launchBrowser,
  newPage,
  screenshot,
  signInThroughUi,
  startUiHarness,
  visible,
  WAIT_MS,
  type TestPage,
  type UiHarness,
} from '../helpers/browser.js';
import { assertNoLeak, makeKey, makeTenant, makeUser, signIn } from '../helpers/factories.js';
import { startOAuthProvider, type TestOAuthProvider } from '../helpers/oauth-provider.js';

// OAuth2 connections in the browser (docs/api/oauth.md, docs/operators/web-ui.md), against a real provider
// (oidc-provider on 127.0.0.1, which signs the person in and consents at once): an operator adds the
// provider in the console, a tenant admin creates a connection of it, clicks Connect, goes through the
// provider and comes back to the connection's page showing "Connected"; a refusal comes back in words.
// Skipped test by test when Chromium is missing.
const skip = browserSkipReason();

const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_TIMEOUT_MS: '5000',
};
const PROVIDER_NAME = 'Test IdP';
const CONNECTION_NAME = 'IdP API';
const RENAMED = 'IdP API (production)';
const SERVICE_PROVIDER = 'Service IdP';
const SERVICE_CONNECTION = 'Reports API';

describe('OAuth2 connections in the browser', () => {
  let h: UiHarness;
  let browser: Browser;
  let idp: TestOAuthProvider;
  let operator: TestPage;
  let person: TestPage;
  let admin: { id: string; email: string; password: string };
  let connectionId = '';
  const closing: Array<() => unknown> = [];

  before(async () => {
    if (skip) return;
    browser = await launchBrowser();
    h = await startUiHarness({ env: ENV });
    // Tokens that live less than hubgate's refresh margin (60 s): every call through a connection refreshes
    // first, so a provider that stops honouring the refresh token makes it expired, as in production.
    idp = await startOAuthProvider(
      { after: (fn) => closing.push(fn) },
      { redirectUri: `${h.uiUrl}/api/v1/oauth/callback`, accessTokenTtl: 30 },
    );
    const tenant = await makeTenant(h, {
      name: 'Acme Ltd',
      entitlements: ['integrations', 'integration_hub'],
    });
    admin = await makeUser(h, tenant.id, { role: 'COMPANY_IT_ADMIN' });
    operator = await newPage(browser);
    operator.page.setDefaultTimeout(WAIT_MS);
    person = await newPage(browser);
    person.page.setDefaultTimeout(WAIT_MS);
  });
  after(async () => {
    if (h) assertNoLeak(h, [idp.clientSecret]);
    await operator?.close();
    await person?.close();
    await browser?.close();
    await Promise.all(closing.map((fn) => fn()));
    await h?.close();
  });

  const dialog = (page: Page) => page.getByRole('dialog');
  /** The paths the person's page asked for (an OAuth2 connection's page asks for no event log). */
  const asked: string[] = [];
  const EVENT_LOG = /^\/api\/v1\/integrations\/connections\/[^/]+\/(events|test)/;
  /** The definition (a fact of the connection's summary) whose text starts so. */
  const fact = (page: Page, starts: string) =>
    page
      .getByRole('definition')
      .filter({ hasText: new RegExp(`^${starts.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) });

  test('an operator adds a provider in the console', { skip, timeout: 120_000 }, async () => {
    const { page } = operator;
    await page.goto(`${h.uiUrl}/platform`);
    await page.getByLabel('Platform key', { exact: true }).fill(h.platformToken);
    await page.getByRole('button', { name: 'Open the console' }).click();
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'OAuth2 providers' })
      .click();
    await page.getByRole('heading', { level: 2, name: 'No OAuth2 providers yet' }).waitFor();
    await assertNoSeriousViolations(page, 'providers empty');
    await screenshot(page, 'oauth-providers-empty');

    await page.getByRole('button', { name: 'Add provider' }).click();
    const form = dialog(page);
    await visible(form);
    // Nothing typed: each required field says what it needs, and nothing is sent.
    await form.getByRole('button', { name: 'Add provider' }).click();
    await form.getByText('Enter the provider’s name.').waitFor();
    assert.equal(
      await form.getByLabel('Key').getAttribute('aria-invalid'),
      'true',
      'the empty key is not marked',
    );
    await form.getByLabel('Key').fill('testidp');
    await form.getByLabel('Name').fill(PROVIDER_NAME);
    await form.getByLabel('Authorization URL').fill(idp.authorizationUrl);
    await form.getByLabel('Token URL').fill(idp.tokenUrl);
    await form.getByLabel('API base URL').fill(idp.apiBaseUrl);
    await form.getByLabel('Client ID').fill(idp.clientId);
    await form.getByLabel('Client secret').fill(idp.clientSecret);
    await form.getByLabel('Scopes').fill(idp.scopes.join(' '));
    // What to register at the provider before anything works: the callback, exactly as hubgate sends it
    // as redirect_uri (the test provider allows that one address only, and the flow below uses it).
    const callback = form.getByRole('textbox', { name: 'Callback URL' });
    assert.equal(
      await callback.inputValue(),
      `${h.uiUrl}/api/v1/oauth/callback`,
      'the dialog does not show the callback URL to register at the provider',
    );
    assert.equal(await callback.getAttribute('readonly'), '', 'the callback URL can be edited');
    await visible(form.getByRole('button', { name: 'Copy the callback URL' }));
    await assertNoSeriousViolations(page, 'add provider dialog');
    await screenshot(page, 'oauth-provider-add');
    await form.getByRole('button', { name: 'Add provider' }).click();
    await gone(form);
    await page
      .getByText(`Added ${PROVIDER_NAME}. Tenants now find it in their connector catalog as oauth2:testidp.`)
      .waitFor();
    const row = page.getByRole('row', { name: new RegExp(PROVIDER_NAME) });
    await row.getByText('oauth2:testidp').waitFor();
    await row.getByText(idp.scopes.join(' ')).waitFor();

    // Edit: the key is fixed, the secret left empty keeps the stored one.
    await row.getByRole('button', { name: `Edit ${PROVIDER_NAME}` }).click();
    await visible(form);
    assert.equal(await form.getByLabel('Key').count(), 0, 'the key can be changed on edit');
    assert.equal(
      await form.getByRole('textbox', { name: 'Callback URL' }).inputValue(),
      `${h.uiUrl}/api/v1/oauth/callback`,
      'the edit dialog does not show the callback URL',
    );
    assert.equal(
      await form.getByLabel('Client secret').inputValue(),
      '',
      'the client secret is shown on edit',
    );
    await assertNoSeriousViolations(page, 'edit provider dialog');
    await screenshot(page, 'oauth-provider-edit');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await gone(form);
    await page.getByText(`Saved the changes to ${PROVIDER_NAME}.`).waitFor();
    await assertNoSeriousViolations(page, 'providers list');
    await screenshot(page, 'oauth-providers');
    assertNoPageErrors(operator, 'providers page');
  });

  test(
    'a tenant admin creates an OAuth2 connection and connects it',
    { skip, timeout: 120_000 },
    async () => {
      const { page } = person;
      page.on('request', (request) => asked.push(new URL(request.url()).pathname));
      await signInThroughUi(page, h.uiUrl, admin, '/connections/new');
      await page.getByRole('radio', { name: PROVIDER_NAME }).check();
      await page.getByLabel('Display name').waitFor();
      // Settings of deliveries do not apply (it receives no events); the throttle is on calls through it.
      for (const label of ['Payload filter', 'Deliveries per second', 'Delivery order']) {
        assert.equal(await page.getByLabel(label).count(), 0, `the form offers ${label}`);
      }
      await visible(page.getByLabel('Calls per second (optional)'));
      await page.getByLabel('Display name').fill(CONNECTION_NAME);
      await page.getByRole('button', { name: 'Create connection' }).click();

      // Not to the credentials dialog: to the connection's page, which offers Connect.
      await page.waitForURL(/\/connections\/[^/?]+$/);
      connectionId = new URL(page.url()).pathname.split('/')[2] ?? '';
      await page.getByRole('heading', { level: 1, name: CONNECTION_NAME }).waitFor();
      await page
        .getByRole('definition')
        .filter({ hasText: /^Not connected yet — connect it to sign in at Test IdP/ })
        .waitFor();
      assert.equal(
        await page.getByRole('button', { name: 'Send test event' }).count(),
        0,
        'a test event is offered',
      );
      assert.equal(
        await page.getByRole('button', { name: /Bind credentials/ }).count(),
        0,
        'binding is offered',
      );
      for (const name of ['Pause', 'Edit', 'Revoke']) {
        await visible(page.getByRole('button', { name, exact: true }));
      }
      await page.getByText(`/api/v1/integrations/connections/${connectionId}/proxy/<path>`).first().waitFor();
      await assertNoSeriousViolations(page, 'oauth connection not connected');
      await screenshot(page, 'oauth-connection-new');

      // Connect: to the provider (which signs in and consents at once) and back through the callback.
      await page.getByRole('button', { name: 'Connect', exact: true }).click();
      await page.waitForURL(
        (url) => url.pathname === `/connections/${connectionId}` && url.search === '?authorized=true',
      );
      await page
        .getByRole('status')
        .getByText(`Connected to ${PROVIDER_NAME}. hubgate keeps the tokens and renews them`, {
          exact: false,
        })
        .waitFor();
      await page
        .getByText(`Connected — scopes ${idp.scopes.join(', ')}, token renewed automatically.`)
        .waitFor();
      await visible(page.getByRole('button', { name: 'Authorize again' }));
      await assertNoSeriousViolations(page, 'oauth connection connected');
      await screenshot(page, 'oauth-connection-connected');

      // The list says it is connected, and leads to its page rather than to an event log.
      await page.goto(`${h.uiUrl}/connections`);
      const row = page.getByRole('row', { name: new RegExp(CONNECTION_NAME) });
      await row.getByText('Connected', { exact: true }).waitFor();
      assert.equal(
        await row.getByRole('button', { name: /credentials/ }).count(),
        0,
        'the list offers credentials',
      );
      await assertNoSeriousViolations(page, 'connections list with an oauth connection');
      await screenshot(page, 'oauth-connections-list');
      assertNoPageErrors(person, 'oauth connection pages');
      // Nothing the pages asked for was refused (the session check before signing in aside).
      assert.deepEqual(
        person.httpErrors.filter((line) => !line.includes('/api/v1/auth/session')),
        [],
        'a request of the oauth connection pages was refused',
      );
      assert.deepEqual(
        asked.filter((path) => EVENT_LOG.test(path)),
        [],
        'the oauth connection page asked for an event log',
      );
    },
  );

  test('a refusal at the provider comes back in words', { skip, timeout: 120_000 }, async () => {
    assert.ok(connectionId, 'the connection of the previous test exists');
    const { page } = person;
    // The same person starts authorizing, and refuses at the provider (the helper's programmatic
    // refusal); the browser then arrives at hubgate's callback with what the provider sent back.
    const session = await signIn(h, admin);
    const r = await h.request('POST', `/api/v1/integrations/connections/${connectionId}/authorize`, {
      session,
    });
    assert.equal(r.status, 200, `authorize answered ${r.status}: ${r.text}`);
    const back = await idp.authorize((r.body as { authorizationUrl: string }).authorizationUrl, {
      deny: true,
    });
    await page.goto(back.href);
    await page.waitForURL(
      (url) => url.pathname === `/connections/${connectionId}` && url.searchParams.has('authorizationError'),
    );
    const alert = page
      .getByRole('alert')
      .filter({ hasText: 'The connection to Test IdP was not authorized.' });
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /refused|access_denied/i, 'the refusal is not said');
    await assertNoSeriousViolations(page, 'oauth connection authorization error');
    await screenshot(page, 'oauth-connection-error');
    await page.getByRole('button', { name: 'Dismiss this message' }).click();
    await page.waitForURL((url) => url.pathname === `/connections/${connectionId}` && url.search === '');
    await gone(alert);
  });

  test(
    'a provider that stops honouring the refresh token: expired, said in words, fixed by Authorize again',
    { skip, timeout: 120_000 },
    async () => {
      assert.ok(connectionId, 'the connection of an earlier test exists');
      const { page } = person;
      // The real path: the provider forgets its refresh tokens, a system calls through the connection,
      // hubgate's refresh is refused (invalid_grant) and the connection becomes expired.
      idp.revokeRefreshTokens();
      const session = await signIn(h, admin);
      const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
      const call = await h.request('GET', `/api/v1/integrations/connections/${connectionId}/proxy/me`, {
        token: key.secret,
      });
      assert.equal(call.status, 409, `a call with a refused refresh answered ${call.status}: ${call.text}`);
      assert.ok(
        idp.tokenCalls.some((c) => c.grantType === 'refresh_token' && !c.ok),
        'the provider was not asked for a refresh it refused',
      );

      await page.goto(`${h.uiUrl}/connections`);
      const row = page.getByRole('row', { name: new RegExp(CONNECTION_NAME) });
      await row.getByText('Authorization expired', { exact: true }).waitFor();
      await page.goto(`${h.uiUrl}/connections/${connectionId}`);
      await fact(
        page,
        'Authorization expired — Test IdP no longer accepts hubgate’s authorization, so calls through this connection are refused. Authorize again to fix it.',
      ).waitFor();
      assert.equal(
        await page.getByText('Current token expires').count(),
        0,
        'an expired connection shows the expiry of a token it no longer has',
      );
      await assertNoSeriousViolations(page, 'oauth connection expired');
      await screenshot(page, 'oauth-connection-expired');

      await page.getByRole('button', { name: 'Authorize again', exact: true }).click();
      await page.waitForURL(
        (url) => url.pathname === `/connections/${connectionId}` && url.search === '?authorized=true',
      );
      await fact(page, 'Connected — scopes').waitFor();
      assertNoPageErrors(person, 'expired oauth connection');
    },
  );

  test(
    'an OAuth2 connection is edited, paused and resumed on its page',
    { skip, timeout: 120_000 },
    async () => {
      const { page } = person;
      await page.goto(`${h.uiUrl}/connections/${connectionId}`);
      await page.getByRole('heading', { level: 1, name: CONNECTION_NAME }).waitFor();

      await page.getByRole('button', { name: 'Edit', exact: true }).click();
      const edit = page.getByRole('dialog', { name: `Edit “${CONNECTION_NAME}”` });
      await visible(edit);
      for (const label of ['Payload filter', 'Delivery order']) {
        assert.equal(await edit.getByLabel(label).count(), 0, `editing offers ${label}`);
      }
      await visible(edit.getByLabel('Calls per second (optional)'));
      await edit.getByLabel('Display name').fill(RENAMED);
      await assertNoSeriousViolations(page, 'edit oauth connection');
      await screenshot(page, 'oauth-connection-edit');
      await edit.getByRole('button', { name: 'Save changes' }).click();
      await gone(edit);
      await page.getByRole('status').getByText(`Saved the changes to “${RENAMED}”.`).waitFor();
      await page.getByRole('heading', { level: 1, name: RENAMED }).waitFor();

      await page.getByRole('button', { name: 'Pause', exact: true }).click();
      const pause = dialog(page);
      await pause
        .getByText(`hubgate refuses calls through “${RENAMED}” to Test IdP’s API until you resume it.`)
        .waitFor();
      await pause.getByRole('button', { name: 'Pause', exact: true }).click();
      await gone(pause);
      const banner = page.getByRole('region', { name: 'Calls are paused' });
      await banner
        .getByText('hubgate refuses calls through it to Test IdP’s API until it is resumed', { exact: false })
        .waitFor();
      assert.equal(
        await page.getByRole('button', { name: 'Pause', exact: true }).count(),
        0,
        'a paused connection offers Pause',
      );
      await assertNoSeriousViolations(page, 'oauth connection paused');
      await screenshot(page, 'oauth-connection-paused');

      await banner.getByRole('button', { name: 'Resume', exact: true }).click();
      const resume = dialog(page);
      await resume.getByRole('button', { name: 'Resume', exact: true }).click();
      await gone(resume);
      await page.getByRole('status').getByText(`“${RENAMED}” was resumed`, { exact: false }).waitFor();
      await gone(banner);
      assertNoPageErrors(person, 'operating an oauth connection');
      assert.deepEqual(
        asked.filter((path) => EVENT_LOG.test(path)),
        [],
        'an event log was asked for',
      );
    },
  );

  test('a provider in use cannot be deleted, said in words', { skip, timeout: 120_000 }, async () => {
    const { page } = operator;
    const row = page.getByRole('row', { name: new RegExp(PROVIDER_NAME) });
    await row.getByRole('button', { name: `Delete ${PROVIDER_NAME}` }).click();
    const confirm = dialog(page);
    await confirm.getByRole('button', { name: 'Delete provider' }).click();
    await confirm.getByText(`${PROVIDER_NAME} is still used by a connection.`, { exact: false }).waitFor();
    await assertNoSeriousViolations(page, 'delete provider refused');
    await screenshot(page, 'oauth-provider-delete-in-use');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await gone(confirm);
  });

  test(
    'a client-credentials connection is connected at creation: nothing to authorize; revoked on its page',
    { skip, timeout: 120_000 },
    async () => {
      const created = await h.request('POST', '/api/v1/platform/oauth-providers', {
        token: h.platformToken,
        body: {
          key: 'servicecc',
          name: SERVICE_PROVIDER,
          tokenUrl: idp.tokenUrl,
          apiBaseUrl: idp.apiBaseUrl,
          clientId: idp.clientId,
          clientSecret: idp.clientSecret,
          scopes: idp.scopes,
          grant: 'client_credentials',
        },
      });
      assert.equal(created.status, 201, `creating the provider answered ${created.status}: ${created.text}`);
      await operator.page.reload();
      await operator.page
        .getByRole('row', { name: new RegExp(SERVICE_PROVIDER) })
        .getByText('Client credentials')
        .waitFor();
      await assertNoSeriousViolations(operator.page, 'providers of both grants');
      await screenshot(operator.page, 'oauth-providers-both-grants');

      const { page } = person;
      await page.goto(`${h.uiUrl}/connections/new`);
      await page.getByRole('radio', { name: SERVICE_PROVIDER }).check();
      await page.getByLabel('Display name').fill(SERVICE_CONNECTION);
      await page.getByRole('button', { name: 'Create connection' }).click();
      await page.waitForURL(/\/connections\/[^/?]+$/);
      await page.getByRole('heading', { level: 1, name: SERVICE_CONNECTION }).waitFor();
      await fact(
        page,
        `Connected — hubgate signs in at ${SERVICE_PROVIDER} with its own client credentials`,
      ).waitFor();
      for (const name of ['Connect', 'Authorize again']) {
        assert.equal(
          await page.getByRole('button', { name, exact: true }).count(),
          0,
          `a client-credentials connection offers ${name}`,
        );
      }
      await visible(page.getByRole('button', { name: 'Revoke', exact: true }));
      await assertNoSeriousViolations(page, 'client-credentials connection');
      await screenshot(page, 'oauth-connection-client-credentials');

      await page.getByRole('button', { name: 'Revoke', exact: true }).click();
      const revoke = dialog(page);
      await revoke
        .getByText(`hubgate refuses every call through “${SERVICE_CONNECTION}”`, { exact: false })
        .waitFor();
      await revoke.getByRole('button', { name: 'Revoke connection' }).click();
      await gone(revoke);
      await page
        .getByRole('status')
        .getByText(`“${SERVICE_CONNECTION}” was revoked. Calls through it are refused from now on.`)
        .waitFor();
      await fact(page, 'Revoked since').waitFor();
      for (const name of ['Pause', 'Edit', 'Revoke']) {
        assert.equal(
          await page.getByRole('button', { name, exact: true }).count(),
          0,
          `a revoked connection offers ${name}`,
        );
      }
      assert.equal(
        await page.getByRole('heading', { name: 'Using this connection' }).count(),
        0,
        'a revoked connection says how to use it',
      );
      await assertNoSeriousViolations(page, 'revoked oauth connection');
      await screenshot(page, 'oauth-connection-revoked');
      assertNoPageErrors(person, 'client-credentials connection');
    },
  );
});
