import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Browser, Page } from 'playwright-core';
import {
  assertNoPageErrors,
  assertNoSeriousViolations,
  browserSkipReason,
  eventually,
  gone,
  launchBrowser,
  newPage,
  screenshot,
  signInThroughUi,
  startUiHarness,
  visible,
  WAIT_MS,
  type UiHarness,
} from '../helpers/browser.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

// An MCP client that signs in with OAuth (contract §23, docs/api/mcp.md), as a desktop agent does: the
// SDK's own client discovers hubgate as its authorization server, registers, and sends the person's
// browser (Chromium here) to the consent page; the person answers there; the agent's loopback server
// receives the code. Then the grant on the API keys page, and its revocation. Skipped test by test
// (not as a suite) when Chromium is missing, so the run's totals count them.
const skip = browserSkipReason();

const MCP_PATH = '/api/v1/mcp';
const READER_TOOLS = [
  'get_connection',
  'get_delivery',
  'hub_overview',
  'list_connections',
  'list_deliveries',
  'list_event_types',
];

/** The agent's loopback server (RFC 8252 §7.3): where the browser comes back with a code or an error. */
interface Callback {
  url: string;
  origin: string;
  close(): Promise<void>;
}

async function startCallback(): Promise<Callback> {
  const server: Server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end('<!doctype html><title>Test agent</title><h1>You can close this window.</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    url: `${origin}/callback`,
    origin,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * An agent's OAuth client provider, as the SDK asks one to be: what it registered, its tokens and
 * PKCE verifier in memory, and the person's browser sent to the authorization URL. `browse` decides
 * what that means (the test page goes there, or the URL is only kept).
 */
function agentProvider(redirectUrl: string, browse: (url: URL) => Promise<void>) {
  let client: OAuthClientInformationMixed | undefined;
  let tokens: OAuthTokens | undefined;
  let verifier = '';
  const state = `state-${Math.random().toString(36).slice(2)}`;
  const redirects: URL[] = [];
  const metadata: OAuthClientMetadata = {
    client_name: 'Test Agent',
    redirect_uris: [redirectUrl],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return redirectUrl;
    },
    get clientMetadata() {
      return metadata;
    },
    state: () => state,
    clientInformation: () => client,
    saveClientInformation: (information) => {
      client = information;
    },
    tokens: () => tokens,
    saveTokens: (saved) => {
      tokens = saved;
    },
    redirectToAuthorization: async (url) => {
      redirects.push(url);
      await browse(url);
    },
    saveCodeVerifier: (saved) => {
      verifier = saved;
    },
    codeVerifier: () => verifier,
    invalidateCredentials: (what) => {
      if (what === 'all' || what === 'client') client = undefined;
      if (what === 'all' || what === 'tokens') tokens = undefined;
    },
  };
  return { provider, state, redirects, tokens: () => tokens };
}

/** A new SDK client on the MCP route, at the address the app knows itself by (its PUBLIC_URL). */
function agentClient(h: UiHarness, provider: OAuthClientProvider) {
  const transport = new StreamableHTTPClientTransport(new URL(`${h.uiUrl}${MCP_PATH}`), {
    authProvider: provider,
  });
  return { transport, client: new Client({ name: 'test-agent', version: '1.0.0' }) };
}

/** tools/list with a bare access token, as any HTTP client sends it: the status is what matters. */
async function listWithToken(h: UiHarness, token: string): Promise<number> {
  const response = await fetch(`${h.uiUrl}${MCP_PATH}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  await response.body?.cancel();
  return response.status;
}

/** The page went to the agent's loopback server: its query, as the agent reads it. */
async function arrivedAt(page: Page, callback: Callback): Promise<URLSearchParams> {
  await page.waitForURL((url) => url.origin === callback.origin, { timeout: WAIT_MS });
  return new URL(page.url()).searchParams;
}

describe('MCP clients signing in with OAuth', () => {
  let h: UiHarness;
  let browser: Browser;
  let callback: Callback;
  before(async () => {
    if (skip) return;
    browser = await launchBrowser();
    h = await startUiHarness();
    callback = await startCallback();
  });
  after(async () => {
    await browser?.close();
    await callback?.close();
    await h?.close();
  });

  test(
    'an admin approves some scopes, the agent gets exactly those tools, and revoking it there ends its tokens',
    { skip, timeout: 300_000 },
    async (t) => {
      const tenant = await makeTenant(h, { entitlements: ['integrations', 'integration_hub'] });
      const admin = await makeUser(h, tenant.id, { role: 'COMPANY_IT_ADMIN' });
      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      try {
        await signInThroughUi(page, h.uiUrl, admin);
        let browsing = true;
        const agent = agentProvider(callback.url, async (url) => {
          if (browsing) await page.goto(url.href);
        });

        // The first connect finds no token: discovery, registration, and the browser sent to consent.
        const first = agentClient(h, agent.provider);
        await assert.rejects(
          first.client.connect(first.transport),
          UnauthorizedError,
          'the first connect, without a token, did not ask for authorization',
        );
        assert.equal(agent.redirects.length, 1, 'the agent was not sent to authorize');
        await page.waitForURL((url) => url.pathname === '/consent' && url.searchParams.has('request'));

        // What the person is asked: the self-declared name, where it returns, the organization.
        await visible(page.getByRole('heading', { level: 1, name: 'An application asks for access' }));
        await visible(page.getByText('“Test Agent”', { exact: true }));
        await visible(page.getByText('The name the application gave itself: hubgate cannot check it.'));
        await visible(page.getByText(new URL(callback.url).host, { exact: true }));
        await visible(page.getByText('An application on this computer.'));
        await visible(page.getByText(tenant.name, { exact: true }).first());
        const scopes = page.getByRole('group', { name: 'What it may do' });
        const boxes = scopes.getByRole('checkbox');
        assert.equal(await boxes.count(), 3, 'not one checkbox per scope the agent asked for');
        for (const box of await boxes.all())
          assert.equal(await box.isChecked(), true, 'a scope is not ticked at first');
        await screenshot(page, 'mcp-consent');
        await assertNoSeriousViolations(page, 'mcp consent page');

        // None ticked: Approve says so on the scopes, and nothing is sent.
        for (const box of await boxes.all()) await box.uncheck();
        await page.getByRole('button', { name: 'Approve' }).click();
        await visible(scopes.getByText('Choose at least one, or deny.'));
        assert.equal(
          await scopes.getByRole('checkbox').first().getAttribute('aria-invalid'),
          'true',
          'the scopes are not marked invalid',
        );
        // Ticked again by keyboard, all but Operate.
        for (const name of ['Integration hub · Read', 'Integrations · Read']) {
          await scopes.getByRole('checkbox', { name }).focus();
          await page.keyboard.press('Space');
        }
        await gone(scopes.getByText('Choose at least one, or deny.'));
        assert.equal(
          await scopes.getByRole('checkbox', { name: 'Integrations · Operate' }).isChecked(),
          false,
          'Operate is ticked though it was left out',
        );

        await page.getByRole('button', { name: 'Approve' }).click();
        const back = await arrivedAt(page, callback);
        assert.equal(back.get('state'), agent.state, 'the state did not come back');
        assert.equal(back.get('iss'), new URL(h.uiUrl).origin, 'the issuer did not come back (RFC 9207)');
        const code = back.get('code');
        assert.ok(code, `no code at the loopback server: ${page.url()}`);

        // The agent finishes, connects again with the same provider, and lists what it may call.
        await first.transport.finishAuth(code);
        const granted = agent.tokens();
        assert.ok(granted?.access_token, 'no access token after finishAuth');
        assert.deepEqual(
          granted.scope?.split(' ').sort(),
          ['integration_hub:READER', 'integrations:READER'],
          'the token does not hold exactly the approved scopes',
        );

        // The grant on the API keys page, not used yet; it follows the agent's first use on its own.
        await page.goto(`${h.uiUrl}/api-keys`);
        const section = page.getByRole('region', { name: 'MCP clients' });
        await visible(page.getByRole('heading', { level: 2, name: 'MCP clients' }));
        const row = section
          .getByRole('row')
          .filter({ has: page.getByRole('rowheader', { name: 'Test Agent' }) });
        await visible(row);
        await visible(row.getByText('Integrations · Read', { exact: true }));
        await visible(row.getByText('Integration hub · Read', { exact: true }));
        assert.equal(await row.getByText('Integrations · Operate').count(), 0, 'Operate was not approved');
        await visible(row.getByText(admin.email, { exact: true }));
        // Cells: scopes, approved by, approved, last used, actions.
        const lastUsed = row.getByRole('cell').nth(3);
        assert.equal(await lastUsed.textContent(), 'Never', 'a grant not used yet shows a last use');

        const second = agentClient(h, agent.provider);
        await second.client.connect(second.transport);
        const tools = (await second.client.listTools()).tools.map((tool) => tool.name).sort();
        assert.deepEqual(tools, READER_TOOLS, 'the tools are not exactly those of the approved scopes');
        assert.ok(!tools.includes('publish_event'), 'a write tool is listed without Operate');

        // No reload: the page reads the list again by itself.
        await eventually(async () =>
          assert.notEqual(await lastUsed.textContent(), 'Never', 'the last use was not followed'),
        );
        await screenshot(page, 'api-keys-mcp-clients');
        await assertNoSeriousViolations(page, 'api keys with an MCP client');
        // On a phone the grant is a card, its Revoke in reach, nothing scrolls sideways.
        await page.setViewportSize({ width: 390, height: 844 });
        const revoke = row.getByRole('button', { name: 'Revoke Test Agent' });
        await revoke.scrollIntoViewIfNeeded();
        const box = await revoke.boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= 390, 'Revoke lies off a 390 px screen');
        const width = await page.evaluate<number>('document.documentElement.scrollWidth');
        assert.ok(width <= 390, `the API keys page is ${width} px wide on a 390 px screen`);
        await screenshot(page, 'api-keys-mcp-clients-390');
        await page.setViewportSize({ width: 1280, height: 800 });

        // Revoked on the page: the token is refused within a second of the answer.
        const token = granted.access_token;
        assert.equal(await listWithToken(h, token), 200, 'the token did not work before revocation');
        await row.getByRole('button', { name: 'Revoke Test Agent' }).click();
        const dialog = page.getByRole('dialog', { name: 'Revoke “Test Agent”?' });
        await visible(dialog);
        await screenshot(page, 'api-keys-mcp-revoke');
        const revoked = page.waitForResponse(
          (response) =>
            response.request().method() === 'DELETE' &&
            response.url().includes('/api/v1/company/oauth-grants/'),
        );
        await dialog.getByRole('button', { name: 'Revoke access' }).click();
        assert.equal((await revoked).status(), 204, 'the revoke was not answered 204');
        const revokedAt = Date.now();
        let status = 200;
        while (status !== 401 && Date.now() - revokedAt < 1_000) status = await listWithToken(h, token);
        const took = Date.now() - revokedAt;
        assert.equal(status, 401, `the token still worked ${took} ms after revocation`);
        t.diagnostic(`the access token was refused ${took} ms after the revoke answer`);
        await gone(dialog);
        await visible(page.getByText('“Test Agent” is revoked.', { exact: false }));
        await gone(row);
        await visible(page.getByText('No MCP client has access.', { exact: false }));

        // The SDK client's next call: refused, and it would have to ask the person again.
        browsing = false;
        await assert.rejects(
          second.client.listTools(),
          UnauthorizedError,
          'the revoked agent was not refused',
        );
        assert.equal(agent.redirects.length, 2, 'the agent was not sent to authorize again');
        await second.client.close();
        assertNoPageErrors(tp, 'consent and API keys pages');
      } finally {
        await tp.close();
      }
    },
  );

  test(
    'signed out, the consent page comes back after sign-in; Deny sends access_denied; the request then has expired',
    { skip, timeout: 300_000 },
    async () => {
      const tenant = await makeTenant(h, { entitlements: ['integrations'] });
      const admin = await makeUser(h, tenant.id, { role: 'EXECUTIVE' });
      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      try {
        const agent = agentProvider(callback.url, async (url) => {
          await page.goto(url.href);
        });
        const { client, transport } = agentClient(h, agent.provider);
        await assert.rejects(
          client.connect(transport),
          UnauthorizedError,
          'the first connect, without a token, did not ask for authorization',
        );

        // Not signed in: sign-in first, then the same request again.
        await page.waitForURL((url) => url.pathname === '/sign-in');
        const next = new URL(page.url()).searchParams.get('next') ?? '';
        assert.match(next, /^\/consent\?request=mcq_/, 'sign-in does not lead back to the consent page');
        await page.getByLabel('E-mail address').fill(admin.email);
        await page.getByLabel('Password', { exact: true }).fill(admin.password);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await page.waitForURL((url) => `${url.pathname}${url.search}` === next);
        await visible(page.getByRole('heading', { level: 1, name: 'An application asks for access' }));

        // Only Integrations is entitled: only its scopes are offered.
        const boxes = page.getByRole('group', { name: 'What it may do' }).getByRole('checkbox');
        assert.deepEqual(
          await Promise.all((await boxes.all()).map((box) => box.getAttribute('value'))),
          ['integrations:READER', 'integrations:OPERATOR'],
          'offered other scopes than the entitled ones asked for',
        );

        // A phone: everything readable without sideways scrolling.
        await page.setViewportSize({ width: 390, height: 844 });
        const width = await page.evaluate<number>('document.documentElement.scrollWidth');
        assert.ok(width <= 390, `the consent page is ${width} px wide on a 390 px screen`);
        await screenshot(page, 'mcp-consent-390');
        await page.setViewportSize({ width: 1280, height: 800 });

        await page.getByRole('button', { name: 'Deny' }).click();
        const back = await arrivedAt(page, callback);
        assert.equal(back.get('error'), 'access_denied', 'a denial did not come back as access_denied');
        assert.equal(back.get('state'), agent.state, 'the state did not come back');
        assert.equal(back.get('code'), null, 'a denial came back with a code');

        // The answered request cannot be answered again.
        await page.goto(`${h.uiUrl}${next}`);
        await visible(page.getByRole('heading', { level: 1, name: 'This request has expired' }));
        await visible(page.getByText('Start again from the application', { exact: false }));
        await screenshot(page, 'mcp-consent-expired');
        await assertNoSeriousViolations(page, 'mcp consent expired');
        assertNoPageErrors(tp, 'consent page, denied');
      } finally {
        await tp.close();
      }
    },
  );

  test(
    'a person whose role cannot manage keys is told so on the consent page',
    { skip, timeout: 300_000 },
    async () => {
      const tenant = await makeTenant(h, { entitlements: ['integrations'] });
      const member = await makeUser(h, tenant.id, { role: 'MEMBER' });
      const tp = await newPage(browser, { colorScheme: 'dark' });
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      try {
        await signInThroughUi(page, h.uiUrl, member);
        const agent = agentProvider(callback.url, async (url) => {
          await page.goto(url.href);
        });
        const { client, transport } = agentClient(h, agent.provider);
        await assert.rejects(
          client.connect(transport),
          UnauthorizedError,
          'the first connect, without a token, did not ask for authorization',
        );
        await page.waitForURL((url) => url.pathname === '/consent');
        await visible(
          page.getByRole('heading', { level: 1, name: 'You cannot give this application access' }),
        );
        await visible(page.getByText('Only people who manage API keys can give an application access'));
        await visible(page.getByText('Your role (Member) cannot.', { exact: false }));
        assert.equal(await page.getByRole('button', { name: 'Approve' }).count(), 0, 'Approve is offered');
        await screenshot(page, 'mcp-consent-role');
        await assertNoSeriousViolations(page, 'mcp consent role refused');

        // The API agrees: the request is not the member's to answer.
        const request = new URL(page.url()).searchParams.get('request') ?? '';
        // A string, not a function: the test's compiler would add helpers the page does not have.
        const answer = await page.evaluate(
          `fetch('/api/v1/oauth/consent/' + encodeURIComponent(${JSON.stringify(request)})).then((r) => r.json())`,
        );
        assert.equal(
          (answer as { code: string }).code,
          'role_forbidden',
          'the API let a member read the request',
        );
        assertNoPageErrors(tp, 'consent page, role refused');
      } finally {
        await tp.close();
      }
    },
  );
});
