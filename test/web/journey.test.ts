// A newcomer's first hour, in a real browser: setup from the link serve prints, a key and a
// connection made in the UI, an event delivered and seen in the log, the audit log, sign-out, a
// session that expires. Each page and dialog on the way is checked with axe and photographed.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { issueSetupToken, setupUrl } from '../../src/setup/setup.js';
import {
  assertNoPageErrors,
  assertNoSeriousViolations,
  browserSkipReason,
  launchBrowser,
  newPage,
  screenshot,
  startUiHarness,
  type TestPage,
  type UiHarness,
} from '../helpers/browser.js';
import { assertNoLeak } from '../helpers/factories.js';
import { startReceiver } from '../helpers/receiver.js';

const skip = browserSkipReason();
const EMAIL = 'founder@acme.example';
const PASSWORD = 'a long and memorable passphrase';
const CONNECTION = 'Orders webhook';

let h: UiHarness;
let browser: Browser;
let tab: TestPage;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

before(async () => {
  if (skip) return;
  receiver = await startReceiver();
  h = await startUiHarness({
    workers: { pollMs: 100 },
    env: { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' },
  });
  browser = await launchBrowser();
  tab = await newPage(browser);
  await tab.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.uiUrl });
});

after(async () => {
  if (skip) return;
  await browser?.close();
  await h?.close();
  await receiver?.close();
});

const visible = (locator: Locator) => locator.first().waitFor({ state: 'visible', timeout: 20_000 });
const heading = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name });
// Evaluated as text: the tests' type check has no DOM types.
const clipboard = (page: Page) => page.evaluate('navigator.clipboard.readText()') as Promise<string>;

/** Axe on what is on screen now, and a light and a dark picture of it. */
async function look(page: Page, name: string): Promise<void> {
  await assertNoSeriousViolations(page, name);
  await screenshot(page, name);
}

// Secrets the walk meets; none may be logged, stored in the browser, or put in an address.
const secrets: { setupToken?: string; platformKey?: string; apiKey?: string; signingSecret?: string } = {};

async function assertSecretsStayInMemory(page: Page): Promise<void> {
  const stored = (await page.evaluate(
    'JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })',
  )) as string;
  for (const [name, secret] of Object.entries(secrets)) {
    if (name === 'setupToken' || !secret) continue;
    assert.ok(!stored.includes(secret), `${name} was written to web storage`);
    assert.ok(!page.url().includes(secret), `${name} is in the address`);
  }
}

test(
  'first-run setup from the printed link signs the founder in and shows the platform key once',
  { skip },
  async () => {
    const { page } = tab;
    // What `serve` prints at start-up (test/setup covers the printing itself).
    const issued = await issueSetupToken(h.database.kysely, h.keyring, new Date());
    assert.ok(issued, 'no setup token is issued on a fresh hub');
    secrets.setupToken = issued.token;

    await page.goto(setupUrl(h.uiUrl, issued.token));
    await visible(heading(page, 'Set up hubgate'));
    await look(page, 'setup');

    // A person who mistypes the second password is told so on the field, before anything is sent.
    await page.getByLabel('Organization name').fill('Acme Corp');
    await page.getByLabel('Your e-mail address').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Repeat the password').fill(`${PASSWORD}!`);
    await page.getByRole('button', { name: 'Create organization and sign in' }).click();
    await visible(page.getByText('The two passwords differ.'));
    await look(page, 'setup-field-error');

    await page.getByLabel('Repeat the password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create organization and sign in' }).click();
    await visible(heading(page, 'Save your platform key'));
    const key = await page.getByRole('textbox', { name: 'Platform key' }).inputValue();
    assert.match(key, /^plt_[0-9A-Za-z]{38}$/, 'setup does not show a platform key');
    secrets.platformKey = key;
    await look(page, 'setup-platform-key');

    // Leaving without copying asks first; after copying, it does not.
    await page.getByRole('button', { name: 'Continue to the overview' }).click();
    await visible(page.getByText('You won’t see this key again.'));
    await page.getByRole('button', { name: 'Go back to the key' }).click();
    await page.getByRole('button', { name: 'Copy' }).click();
    await visible(page.getByRole('button', { name: 'Copied' }));
    assert.equal(
      await clipboard(page),
      key,
      'the Copy button put something other than the platform key on the clipboard',
    );

    const monitoring = await h.request('GET', '/api/v1/platform/monitoring', { token: key });
    assert.equal(monitoring.status, 200, 'the platform key from setup works');

    await page.getByRole('button', { name: 'Continue to the overview' }).click();
    await visible(heading(page, 'Overview'));
    assert.equal(new URL(page.url()).pathname, '/', 'setup does not land on the overview');
    assert.ok(!page.url().includes(issued.token), 'the token left the address bar');
    await visible(page.getByRole('heading', { name: 'No connections yet' }));
    await visible(page.getByText('Acme Corp', { exact: true }).first());
    await look(page, 'overview-empty');

    // The link is spent: setup says so, and the API refuses it.
    const again = await h.request('GET', '/api/v1/setup');
    assert.deepEqual(
      again.body,
      { required: false },
      'setup is still required after it was done in the browser',
    );
  },
);

test(
  'a key and a connection made in the UI deliver a signed event that the log shows',
  { skip },
  async () => {
    const { page } = tab;
    const nav = page.getByRole('navigation', { name: 'Main' });

    await nav.getByRole('link', { name: 'API keys' }).click();
    await visible(heading(page, 'API keys'));
    await page.getByRole('button', { name: 'Create key' }).first().click();
    const create = page.getByRole('dialog', { name: 'Create an API key' });
    await create.getByRole('textbox', { name: 'Name' }).fill('order sync');
    await create
      .getByRole('group', { name: 'Integrations', exact: true })
      .getByRole('checkbox', { name: 'Operate', exact: true })
      .check();
    await create.getByRole('button', { name: 'Create key' }).click();
    const saved = page.getByRole('dialog', { name: 'Save your API key' });
    const apiKey = await saved.getByRole('textbox', { name: 'API key secret' }).inputValue();
    assert.match(apiKey, /^tnt_/, 'the key created in the UI is not a tenant API key');
    secrets.apiKey = apiKey;
    await saved.getByRole('button', { name: 'Copy', exact: true }).click();
    assert.equal(
      await clipboard(page),
      apiKey,
      'the Copy button put something other than the API key on the clipboard',
    );
    await saved.getByRole('button', { name: 'Done' }).click();
    await saved.waitFor({ state: 'hidden' });

    await nav.getByRole('link', { name: 'Connections' }).click();
    await visible(heading(page, 'Connections'));
    await page.getByRole('link', { name: 'Create connection' }).first().click();
    await visible(heading(page, 'Create a connection'));
    await page.getByRole('radio', { name: 'Webhook' }).check();
    await page.getByLabel('Display name').fill(CONNECTION);
    await page.getByRole('textbox', { name: 'Receiver URL' }).fill(receiver.url('/orders'));
    await page.getByRole('button', { name: 'Create connection' }).click();

    const bind = page.getByRole('dialog', { name: `Bind credentials to “${CONNECTION}”` });
    await visible(bind);
    await bind.getByRole('button', { name: 'Bind credentials' }).click();
    const shown = page.getByRole('dialog', { name: `Signing secret of “${CONNECTION}”` });
    const signingSecret = await shown.getByRole('textbox', { name: 'Signing secret' }).inputValue();
    assert.match(signingSecret, /^whsec_/, 'the generated signing secret is not a whsec_ secret');
    secrets.signingSecret = signingSecret;
    await shown.getByRole('button', { name: 'Copy' }).click();
    await visible(shown.getByRole('button', { name: 'Copied' }));
    await shown.getByRole('button', { name: 'Done' }).click();
    await shown.waitFor({ state: 'hidden' });
    await assertSecretsStayInMemory(page);

    // Automation publishes with the key the UI created.
    const published = await h.request('POST', '/api/v1/integrations/events', {
      token: apiKey,
      body: { type: 'order.created', data: { orderId: 'o-1001' } },
    });
    assert.equal(published.status, 202, published.text);
    const [delivered] = await receiver.waitFor(1, 20_000);
    assert.ok(delivered, 'the receiver got no delivery of the published event');
    // The secret the person copied verifies what the receiver got.
    const verified = new Webhook(signingSecret).verify(delivered.body, {
      'webhook-id': String(delivered.headers['webhook-id']),
      'webhook-timestamp': String(delivered.headers['webhook-timestamp']),
      'webhook-signature': String(delivered.headers['webhook-signature']),
    }) as { id: string };
    assert.equal(verified.id, published.body.id, 'the delivered event is another one than published');

    await page.getByRole('link', { name: `Events of ${CONNECTION}` }).click();
    await visible(heading(page, CONNECTION));
    const toggle = page.getByRole('button', { name: `Show attempts of ${published.body.id}` });
    await visible(toggle);
    // The worker records the outcome a moment after the receiver answered: refresh until it shows.
    const row = page.getByRole('row').filter({ has: toggle });
    const deadline = Date.now() + 20_000;
    while (!(await row.getByText('Delivered', { exact: false }).count())) {
      assert.ok(Date.now() < deadline, 'the delivery never showed as delivered');
      await page.getByRole('button', { name: /^Refresh/ }).click();
      await page.waitForTimeout(250);
    }
    await toggle.click();
    assert.equal(
      await toggle.getAttribute('aria-expanded'),
      'true',
      'the attempts toggle does not say it is expanded once opened',
    );
    await visible(page.getByText('127.0.0.1').first());
    await look(page, 'journey-event-log');

    // On a phone the pages fit the screen; wide tables scroll inside their box, not the page.
    await page.setViewportSize({ width: 375, height: 740 });
    for (const [link, title] of [
      ['Overview', 'Overview'],
      ['Connections', 'Connections'],
      ['Audit log', 'Audit log'],
    ] as const) {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link }).click();
      await visible(heading(page, title));
      await page.getByRole('status').filter({ hasText: 'Loading' }).waitFor({ state: 'detached' });
      const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      assert.ok(width <= 375, `${title} is ${width} px wide on a 375 px screen`);
      await page.screenshot({ path: `screenshots/phone-${title.toLowerCase().replace(' ', '-')}.png` });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('link', { name: `Events of ${CONNECTION}` }).click();
    await visible(heading(page, CONNECTION));

    // The overview now counts the connection and the delivery.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
    await visible(heading(page, 'Overview'));
    await visible(page.getByRole('heading', { name: 'Deliveries in the last 24 hours' }));
    await look(page, 'overview');
    await page.goBack();
    await visible(heading(page, CONNECTION));

    // Back returns to the list, forward to the log, and a reload keeps the page.
    await page.goBack();
    await visible(heading(page, 'Connections'));
    await page.goForward();
    await visible(heading(page, CONNECTION));
    await page.reload();
    await visible(heading(page, CONNECTION));
  },
);

test('the audit log tells the story so far', { skip }, async () => {
  const { page } = tab;
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).click();
  await visible(heading(page, 'Audit log'));
  const table = page.getByRole('table');
  await visible(table.getByText(/set up hubgate/i));
  await visible(table.getByText(/created an API key|API key created/i));
  await visible(table.getByText(/connection created|created a connection/i));
  await look(page, 'journey-audit-log');
});

test('profile, a mistyped address, and sign-out', { skip }, async () => {
  const { page } = tab;
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Profile' }).click();
  await visible(heading(page, 'Profile'));
  await visible(page.getByText(EMAIL).first());
  await visible(page.getByText('Platform admin').first());
  await look(page, 'profile');

  // By keyboard: the first Tab reaches "Skip to content", which leads past the navigation.
  await page.reload();
  await visible(heading(page, 'Profile'));
  await page.keyboard.press('Tab');
  const skipLink = page.getByRole('link', { name: 'Skip to content' });
  assert.equal(
    await skipLink.evaluate((el) => el === el.ownerDocument.activeElement),
    true,
    'the first Tab does not reach "Skip to content"',
  );
  await page.keyboard.press('Enter');
  await page.keyboard.press('Tab');
  const focused = await page.evaluate('document.activeElement?.closest("main") !== null');
  assert.equal(focused, true, 'after skipping, Tab moves inside the page, not through the navigation');

  await page.goto(`${h.uiUrl}/no/such/page`);
  await visible(heading(page, 'Page not found'));
  await visible(page.getByRole('navigation', { name: 'Main' }));
  await look(page, 'not-found');

  await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
  await visible(heading(page, 'Sign in'));
  await visible(page.getByText('You have signed out.'));
  await look(page, 'sign-in-signed-out');
  // The session is over on the server too.
  await page.goto(`${h.uiUrl}/connections`);
  await visible(heading(page, 'Sign in'));
  assert.equal(
    new URL(page.url()).searchParams.get('next'),
    '/connections',
    'signing in again would not return to the page asked for',
  );
});

test(
  'wrong credentials are said in words; a session that expires sends the person back to sign in',
  { skip },
  async () => {
    const { page } = tab;
    await page.getByLabel('E-mail address').fill(EMAIL);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await visible(page.getByRole('alert').filter({ hasText: 'The e-mail address or password is wrong.' }));
    await look(page, 'sign-in-wrong-password');

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    // Sign-in returns to the page the person was sent away from.
    await visible(heading(page, 'Connections'));
    // The list has loaded: no request of this page is still on its way when the clock moves.
    await visible(page.getByRole('link', { name: `Events of ${CONNECTION}` }));
    await page.waitForLoadState('networkidle');

    // Thirteen hours later the session is past its 12-hour limit: the next call gets 401.
    h.setNow(new Date(Date.now() + 13 * 60 * 60 * 1000));
    try {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
      await visible(heading(page, 'Sign in'));
      await visible(page.getByText('Your session has ended. Sign in again to continue.'));
      await look(page, 'sign-in-session-ended');
    } finally {
      h.setNow(null);
    }
    await page.getByLabel('E-mail address').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await visible(heading(page, 'Overview'));

    await assertSecretsStayInMemory(page);
    assertNoPageErrors(tab, 'the whole walk');
    // Shown once each: the platform key and the API key in their answers; never in a log.
    assertNoLeak(h, [PASSWORD, secrets.setupToken!], []);
    for (const secret of [secrets.platformKey!, secrets.apiKey!, secrets.signingSecret!]) {
      assert.ok(!h.logs().includes(secret), 'a secret shown once was logged');
    }
  },
);

test('sign-in sends the person back only to a page of this origin', { skip }, async () => {
  const { page } = tab;
  // Still signed in from the walk: the sign-in page forwards at once to where `next` says.
  for (const next of [
    '//evil.example/',
    '/\\evil.example/',
    '/..//evil.example/',
    '/x/..//evil.example',
    '/.%2e//evil.example',
    'https://evil.example/',
    'javascript:alert(1)',
  ]) {
    await page.goto(`${h.uiUrl}/sign-in?next=${encodeURIComponent(next)}`);
    await visible(heading(page, 'Overview'));
    assert.equal(page.url(), `${h.uiUrl}/`, `next=${next}`);
  }
  await page.goto(`${h.uiUrl}/sign-in?next=${encodeURIComponent('/audit-log?cursor=x#top')}`);
  await visible(heading(page, 'Audit log'));
  assert.equal(
    new URL(page.url()).pathname,
    '/audit-log',
    'sign-in does not return to the audit log page asked for',
  );
});
