import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { createPlatformKey, revokePlatformKey } from '../../src/keys/platform-keys.js';
import {
  assertNoPageErrors,
  assertNoSeriousViolations,
  browserSkipReason,
  eventually,
  gone,
  launchBrowser,
  newPage,
  screenshot,
  startUiHarness,
  visible,
  WAIT_MS,
  type TestPage,
  type UiHarness,
} from '../helpers/browser.js';
import { makeSignedInTenant, makeWebhookConnection, signIn } from '../helpers/factories.js';
import { startReceiver } from '../helpers/receiver.js';

// The operator console at /platform (docs/operators/web-ui.md), walked as an operator: by role and accessible
// name. Skipped test by test when Chromium is missing, so the run's totals count them.
const skip = browserSkipReason();

// Receivers listen on 127.0.0.1; a delivery answered 410 fails at once (docs/api/events.md).
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_TIMEOUT_MS: '5000',
  // Alerts are evaluated twice a second, so a failed delivery fires DeliveryFailed at once.
  ALERT_EVALUATION_INTERVAL_MS: '500',
};

const REFUSED = /hubgate refused that platform key: it was revoked, has expired, or was mistyped/;

describe('operator console', () => {
  let h: UiHarness;
  let browser: Browser;
  before(async () => {
    if (skip) return;
    browser = await launchBrowser();
    h = await startUiHarness({ env: ENV, workers: { pollMs: 50 } });
  });
  after(async () => {
    await browser?.close();
    await h?.close();
  });

  /** A page that records every console line and requested URL, to look for the key in them. */
  async function consolePage(): Promise<TestPage & { lines: string[]; requested: string[] }> {
    const tp = await newPage(browser);
    tp.page.setDefaultTimeout(WAIT_MS);
    const lines: string[] = [];
    const requested: string[] = [];
    tp.page.on('console', (message) => lines.push(message.text()));
    tp.page.on('request', (request) => requested.push(request.url()));
    return Object.assign(tp, { lines, requested });
  }

  const keyField = (page: Page) => page.getByLabel('Platform key', { exact: true });

  async function pasteKey(page: Page, key: string): Promise<void> {
    await keyField(page).fill(key);
    await page.getByRole('button', { name: 'Open the console' }).click();
  }

  async function openConsole(page: Page, path = '/platform'): Promise<void> {
    await page.goto(`${h.uiUrl}${path}`);
    await pasteKey(page, h.platformToken);
    await visible(page.getByRole('navigation', { name: 'Console' }));
  }

  /** The key may be in this tab's sessionStorage, and nowhere else a page could leave it. */
  async function assertKeyKeptInTabOnly(
    tp: TestPage & { lines: string[]; requested: string[] },
    key: string,
  ) {
    const local = String(
      await tp.page.evaluate(
        `Object.keys(localStorage).map((n) => n + '=' + localStorage.getItem(n)).join('\\n')`,
      ),
    );
    assert.ok(!local.includes(key), 'the platform key was written to localStorage');
    assert.ok(!tp.page.url().includes(key), 'the platform key is in the page URL');
    assert.ok(!tp.requested.some((url) => url.includes(key)), 'the platform key was in a requested URL');
    assert.ok(!tp.lines.some((line) => line.includes(key)), 'the platform key was written to the console');
    const cookies = await tp.context.cookies();
    assert.ok(!cookies.some((c) => c.value.includes(key)), 'the platform key is in a cookie');
  }

  const sessionKey = (page: Page) => page.evaluate(`sessionStorage.getItem('hubgate.platformKey')`);

  test(
    'the key page explains a malformed, an unknown and a revoked key',
    { skip, timeout: 180_000 },
    async () => {
      const tp = await consolePage();
      const { page } = tp;
      try {
        await page.goto(`${h.uiUrl}/platform`);
        // No tenant session, and no detour through sign-in.
        await visible(page.getByRole('heading', { level: 1, name: 'Operator console' }));
        assert.equal(
          new URL(page.url()).pathname,
          '/platform',
          'the operator console sent the operator elsewhere',
        );
        assert.equal(
          await keyField(page).getAttribute('type'),
          'password',
          'the platform key is shown in clear as it is typed',
        );
        await screenshot(page, 'platform-key');
        await assertNoSeriousViolations(page, 'platform key page');

        const field = keyField(page);
        await pasteKey(page, '');
        await visible(page.getByText('Paste the platform key.'));
        await pasteKey(page, 'hello there');
        await visible(page.getByText(/A platform key starts with plt_/));
        assert.equal(
          await field.getAttribute('aria-invalid'),
          'true',
          'the malformed key is not marked invalid for screen readers',
        );
        await pasteKey(page, `tnt_${'a'.repeat(38)}`);
        await visible(page.getByText(/That is a tenant API key/));
        await pasteKey(page, 'plt_abc123');
        await visible(page.getByText(/not a whole platform key: after plt_ it has 38 letters and digits/));

        // "Show the key" turns the field into plain text, and back.
        await page.getByRole('checkbox', { name: 'Show the key' }).check();
        assert.equal(await field.getAttribute('type'), 'text', '"Show the key" does not show the key');
        await page.getByRole('checkbox', { name: 'Show the key' }).uncheck();

        // Well-formed, but hubgate never made it.
        await pasteKey(page, `plt_${'Z'.repeat(38)}`);
        await visible(page.getByText(REFUSED));
        await screenshot(page, 'platform-key-refused');
        await assertNoSeriousViolations(page, 'platform key refused');

        // Made, then revoked.
        const revoked = await createPlatformKey(
          h.database.kysely,
          h.keyring,
          { name: 'old', expiresAt: null },
          new Date(),
        );
        await revokePlatformKey(h.database.kysely, revoked.id, new Date());
        await field.fill('');
        await pasteKey(page, revoked.secret);
        await visible(page.getByText(REFUSED));
        assert.equal(await sessionKey(page), null, 'a refused key is not kept');

        // A key revoked while the console is open: the next refresh says why it asks again.
        const live = await createPlatformKey(
          h.database.kysely,
          h.keyring,
          { name: 'live', expiresAt: null },
          new Date(),
        );
        await pasteKey(page, live.secret);
        await visible(page.getByRole('heading', { level: 1, name: 'Monitoring' }));
        await revokePlatformKey(h.database.kysely, live.id, new Date());
        await visible(page.getByRole('heading', { level: 1, name: 'Operator console' }));
        await visible(page.getByRole('alert').filter({ hasText: REFUSED }));
        assert.equal(await sessionKey(page), null, 'a revoked key is forgotten');
        await assertKeyKeptInTabOnly(tp, live.secret);
        await assertKeyKeptInTabOnly(tp, revoked.secret);
        assertNoPageErrors(tp, 'platform key page');
      } finally {
        await tp.close();
      }
    },
  );

  test(
    'a valid key opens monitoring; a reload keeps it, another tab asks again, sign out forgets it',
    { skip, timeout: 180_000 },
    async () => {
      const tp = await consolePage();
      const { page } = tp;
      const authorizations: (string | undefined)[] = [];
      page.on('request', (request) => {
        if (request.url().includes('/api/v1/platform/')) authorizations.push(request.headers().authorization);
      });
      const other = await consolePage();
      try {
        await openConsole(page);
        await visible(page.getByRole('heading', { level: 1, name: 'Monitoring' }));
        const deliveries = page.getByRole('region', { name: 'Deliveries' });
        await visible(deliveries.getByText('Failed share', { exact: true }).first());
        await visible(page.getByRole('region', { name: 'Queue' }).getByText('Pending'));
        const service = page.getByRole('region', { name: 'Service' });
        await visible(service.getByText(/^Answering/));
        await visible(
          page.getByRole('region', { name: 'Tenants and connections' }).getByText('Tenants', { exact: true }),
        );
        await visible(page.getByText(/Live, every 5 seconds/));
        assert.equal(
          await sessionKey(page),
          h.platformToken,
          "the platform key is not kept in this tab's sessionStorage",
        );

        // Live: the figures are asked for again while the tab is visible.
        const before = authorizations.filter(Boolean).length;
        await eventually(
          () => assert.ok(authorizations.filter(Boolean).length > before, 'no refresh'),
          15_000,
        );
        assert.ok(
          authorizations.every((a) => a === `Bearer ${h.platformToken}`),
          'every platform request carries the key as Bearer',
        );

        // A reload keeps the key (this tab's sessionStorage) and the page.
        await page.goto(`${h.uiUrl}/platform/tenants`);
        await visible(page.getByRole('heading', { level: 1, name: 'Tenants' }));
        await page.reload();
        await visible(page.getByRole('heading', { level: 1, name: 'Tenants' }));

        // Another tab (another context) has to paste it again.
        await other.page.goto(`${h.uiUrl}/platform`);
        await visible(other.page.getByRole('heading', { level: 1, name: 'Operator console' }));
        assert.equal(
          await sessionKey(other.page),
          null,
          'another tab got the platform key without pasting it',
        );

        // Sign out forgets it: the key page again, also after a reload.
        await page.getByRole('button', { name: 'Sign out' }).click();
        await visible(page.getByRole('heading', { level: 1, name: 'Operator console' }));
        await visible(page.getByText(/You have signed out/));
        assert.equal(await sessionKey(page), null, 'sign-out did not forget the platform key');
        await page.reload();
        await visible(keyField(page));
        await assertKeyKeptInTabOnly(tp, h.platformToken);
        await assertKeyKeptInTabOnly(other, h.platformToken);
        assertNoPageErrors(tp, 'console');
        assertNoPageErrors(other, 'second tab');
      } finally {
        await tp.close();
        await other.close();
      }
    },
  );

  test('the charts draw real deliveries', { skip, timeout: 240_000 }, async () => {
    const { session } = await makeSignedInTenant(h);
    const ok = await startReceiver();
    const refusing = await startReceiver((_r, _i, res) => void res.writeHead(410).end());
    const tp = await consolePage();
    const { page } = tp;
    try {
      await makeWebhookConnection(h, session, ok.url(), { eventTypes: ['ok.*'] });
      await makeWebhookConnection(h, session, refusing.url(), { eventTypes: ['gone.*'] });
      for (const type of ['ok.1', 'ok.2', 'ok.3', 'gone.1']) {
        const r = await h.request('POST', '/api/v1/integrations/events', {
          session,
          body: { type, data: {} },
        });
        assert.equal(r.status, 202, r.text);
      }
      await ok.waitFor(3);
      await refusing.waitFor(1);

      await openConsole(page);
      const throughput = page.getByRole('region', { name: 'Throughput' });
      // The history is asked for every 30 s; the deliveries show at the latest at the next refresh.
      await visible(throughput.getByText('Last hour: 3 delivered, 1 failed.'));
      const ratio = page.getByRole('region', { name: 'Failure ratio' });
      await visible(ratio.getByText(/^Last hour: 25 % of the deliveries that ended failed \(1 of 4\)/));
      const latency = page.getByRole('region', { name: 'Latency' });
      await visible(
        latency.getByText(/^Last hour: latency p95 up to [\d.,]+ ms; latest measured minute p50/),
      );
      await visible(page.getByRole('region', { name: 'Queue depth' }).getByText(/^Last hour: /));

      // Each chart is a picture with a name and a description, drawn on a canvas as wide as its box.
      for (const name of ['Throughput', 'Failure ratio', 'Latency', 'Queue depth']) {
        const chart = page.getByRole('img', { name });
        await visible(chart);
        assert.match(
          (await chart.getAttribute('aria-describedby')) ?? '',
          /summary/,
          `the ${name} chart is not described by its summary`,
        );
        const sizes = await chart
          .locator('canvas')
          .evaluate((c: { clientWidth: number; width: number }) => [c.clientWidth, c.width]);
        assert.ok(sizes[0]! > 300, `${name}: canvas ${sizes[0]} px wide`);
      }
      // Drawn: the throughput chart's legend shows both series.
      await visible(page.getByRole('region', { name: 'Throughput' }).getByText('Delivered', { exact: true }));

      await screenshot(page, 'platform-monitoring');
      await assertNoSeriousViolations(page, 'platform monitoring');

      // A wider range, kept in the URL.
      await page.getByRole('combobox', { name: 'Range' }).selectOption({ label: '24 hours' });
      await visible(throughput.getByText('Last 24 hours: 3 delivered, 1 failed.'));
      assert.equal(
        new URL(page.url()).searchParams.get('minutes'),
        '1440',
        'the chosen range is not in the URL',
      );
      await page.reload();
      await visible(throughput.getByText('Last 24 hours: 3 delivered, 1 failed.'));
      assert.equal(
        await page.getByRole('combobox', { name: 'Range' }).inputValue(),
        '1440',
        'the chosen range is lost on reload',
      );

      // The failed delivery fires DeliveryFailed, listed with its labels (asked every 15 s); its 410
      // paused the connection too, which fires ConnectionPaused (docs/api/connections.md).
      const firing = page.getByRole('region', { name: 'Firing alerts' });
      await visible(firing.getByText('DeliveryFailed', { exact: true }));
      await visible(firing.getByText('ConnectionPaused', { exact: true }));
      await visible(firing.getByText(/connectionId=con_/).first());

      // The snapshot agrees.
      const deliveries = page.getByRole('region', { name: 'Deliveries' });
      await visible(deliveries.getByText('25.0 %'));
      await assertKeyKeptInTabOnly(tp, h.platformToken);
      // No CSP violation (uPlot styles through the CSSOM only), no error.
      assertNoPageErrors(tp, 'monitoring');
    } finally {
      await tp.close();
      await Promise.all([ok.close(), refusing.close()]);
    }
  });

  test('tenants: create with entitlements, change them, add a user', { skip, timeout: 240_000 }, async () => {
    const tp = await consolePage();
    const { page } = tp;
    const name = `Acme Logistics ${Date.now().toString(36)}`;
    const rowOf = async (text: string): Promise<Locator> => {
      const row = page
        .getByRole('row')
        .filter({ has: page.getByRole('rowheader', { name: new RegExp(text) }) });
      await visible(row);
      return row;
    };
    try {
      await openConsole(page);
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Tenants' }).click();
      await visible(page.getByRole('heading', { level: 1, name: 'Tenants' }));

      // Create: the name is required; modules are checkboxes.
      await page.getByRole('button', { name: 'Create tenant' }).click();
      let dialog = page.getByRole('dialog', { name: 'Create a tenant' });
      await visible(dialog);
      await dialog.getByRole('button', { name: 'Create tenant' }).click();
      await visible(dialog.getByText('Enter the tenant’s name.'));
      await dialog.getByRole('textbox', { name: 'Name' }).fill(name);
      await dialog.getByRole('checkbox', { name: 'Integrations', exact: true }).check();
      await assertNoSeriousViolations(page, 'platform create tenant');
      await dialog.getByRole('button', { name: 'Create tenant' }).click();
      await gone(dialog);
      await visible(page.getByText(`Tenant “${name}” was created with Integrations.`));
      let row = await rowOf(name);
      await visible(row.getByRole('cell', { name: 'Integrations', exact: true }));
      const tenantId = (await row.locator('.tenant-id').textContent()) ?? '';
      let read = await h.request('GET', `/api/v1/platform/tenants/${tenantId}`, { token: h.platformToken });
      assert.deepEqual(
        read.body.entitlements,
        ['integrations'],
        'the new tenant is not entitled to Integrations only',
      );

      // Change entitlements: add the hub.
      await row.getByRole('button', { name: 'Entitlements' }).click();
      dialog = page.getByRole('dialog', { name: `Entitlements of ${name}` });
      await visible(dialog);
      assert.equal(
        await dialog.getByRole('checkbox', { name: 'Integrations', exact: true }).isChecked(),
        true,
        'the entitlements dialog does not show Integrations as ticked',
      );
      await dialog.getByRole('checkbox', { name: 'Integration hub', exact: true }).check();
      await dialog.getByRole('button', { name: 'Save entitlements' }).click();
      await gone(dialog);
      await visible(page.getByText(`“${name}” is now entitled to Integrations and Integration hub.`));
      row = await rowOf(name);
      await visible(row.getByRole('cell', { name: 'Integrations, Integration hub' }));
      read = await h.request('GET', `/api/v1/platform/tenants/${tenantId}`, { token: h.platformToken });
      assert.deepEqual(
        [...read.body.entitlements].sort(),
        ['integration_hub', 'integrations'],
        "the tenant's entitlements are not Integrations and Integration hub after the change",
      );

      // Add a user: what is wrong, in words, on the field — the page's checks, then the API's.
      await row.getByRole('button', { name: 'Add user' }).click();
      dialog = page.getByRole('dialog', { name: `Add a user to ${name}` });
      await visible(dialog);
      const email = dialog.getByRole('textbox', { name: 'E-mail address' });
      const password = dialog.getByLabel('Password', { exact: true });
      await email.fill('not an address');
      await password.fill('short');
      await dialog.getByRole('button', { name: 'Add user' }).click();
      await visible(dialog.getByText('Enter an e-mail address, like name@example.com.'));
      await visible(dialog.getByText('Use 12 to 200 characters; this one has 5.'));
      await assertNoSeriousViolations(page, 'platform add user errors');
      // Looks like an address to the page, not to the API (no dot in the domain).
      await email.fill('ops@localhost');
      await password.fill('a long enough password');
      await dialog.getByRole('button', { name: 'Add user' }).click();
      await visible(dialog.getByText('hubgate does not take this as an e-mail address. Check it.'));
      assert.equal(
        await email.getAttribute('aria-invalid'),
        'true',
        'the e-mail address the API refused is not marked invalid for screen readers',
      );
      const address = `exec-${Date.now().toString(36)}@example.com`;
      await email.fill(address);
      await dialog.getByRole('combobox', { name: 'Role' }).selectOption({ label: 'Executive' });
      await dialog.getByRole('button', { name: 'Add user' }).click();
      await gone(dialog);
      await visible(page.getByText(`${address} was added to “${name}” as Executive.`));
      // The person can sign in with that password.
      await signIn(h, { email: address, password: 'a long enough password' });

      // The same address again: the conflict is said on the field.
      row = await rowOf(name);
      await row.getByRole('button', { name: 'Add user' }).click();
      dialog = page.getByRole('dialog', { name: `Add a user to ${name}` });
      await dialog.getByRole('textbox', { name: 'E-mail address' }).fill(address);
      await dialog.getByLabel('Password', { exact: true }).fill('another long password');
      await dialog.getByRole('button', { name: 'Add user' }).click();
      await visible(dialog.getByText('A user with this e-mail address exists already.'));
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await gone(dialog);

      await screenshot(page, 'platform-tenants');
      await assertNoSeriousViolations(page, 'platform tenants');
      await assertKeyKeptInTabOnly(tp, h.platformToken);
      assertNoPageErrors(tp, 'tenants');
    } finally {
      await tp.close();
    }
  });
});
