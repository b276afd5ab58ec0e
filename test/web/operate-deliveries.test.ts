import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import {
  assertNoSeriousViolations,
  browserSkipReason,
  eventually,
  hasFocus,
  launchBrowser,
  newPage,
  screenshot,
  signInThroughUi,
  startUiHarness,
  type TestPage,
  type UiHarness,
} from '../helpers/browser.js';
import { publishEvent, waitForDeliveries, type Delivery, type Page as ListPage } from '../helpers/events.js';
import { makeTenant, makeUser, makeWebhookConnection, signIn } from '../helpers/factories.js';
import type { TestSession } from '../helpers/harness.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

// Operating deliveries (docs/api/events.md) in the web UI, walked as a tenant does on the day a receiver breaks: send a test event
// and see how it landed, read what the receiver answered in a delivery's page, pause (the banner says
// why) and resume with the skipped deliveries replayed, recover the failed ones once the receiver is
// fixed, edit the connection, and keep the log's filters in the URL. Real app, real receivers on
// 127.0.0.1, Chromium; everything found by role and accessible name. Skipped without Chromium.
const skip = browserSkipReason();

// A failing delivery gives up after one retry a second later.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_RETRY_SCHEDULE: '1',
  DELIVERY_TIMEOUT_MS: '5000',
};
const WAIT = 30_000;
const NAME = 'Orders webhook';
const CONNECTIONS = '/api/v1/integrations/connections';
const FAILURE_BODY = '{"error":"database is locked","retryable":true}';

// Evaluated as text: the tests' type check has no DOM types.
const clipboard = (page: Page) => page.evaluate('navigator.clipboard.readText()') as Promise<string>;
const shown = (locator: Locator) => locator.first().waitFor({ state: 'visible', timeout: WAIT });

describe('operating deliveries in the web UI', () => {
  let h: UiHarness;
  let browser: Browser;
  let receiver: Receiver;
  let other: Receiver;
  let failing = false;
  let api: TestSession;
  let tp: TestPage;
  let page: Page;
  let hook: { id: string };
  let tenant = '';

  const heading = (name: string | RegExp) => page.getByRole('heading', { level: 1, name });
  const button = (name: string | RegExp) =>
    page.getByRole('button', { name, exact: typeof name === 'string' });
  const connectionUrl = (id: string, query = '') => `${h.uiUrl}/connections/${id}/events${query}`;
  const openConnection = async (id: string, name: string, query = '') => {
    await page.goto(connectionUrl(id, query));
    await shown(heading(name));
  };
  /** Axe on what is on screen now, and a light and a dark picture of it. */
  const look = async (name: string) => {
    await assertNoSeriousViolations(page, name);
    await screenshot(page, name);
  };
  const log = async (id: string, query = ''): Promise<Delivery[]> => {
    const r = await h.request<ListPage<Delivery>>('GET', `${CONNECTIONS}/${id}/events${query}`, {
      session: api,
    });
    assert.equal(r.status, 200, `the log of ${id}${query} answered ${r.status}: ${r.text}`);
    return r.body.data;
  };

  before(async () => {
    if (skip) return;
    receiver = await startReceiver((_request, _index, response: ServerResponse) => {
      response.statusCode = failing ? 503 : 200;
      response.setHeader('content-type', failing ? 'application/json' : 'text/plain');
      response.end(failing ? FAILURE_BODY : 'ok');
    });
    other = await startReceiver();
    h = await startUiHarness({ env: ENV, workers: { pollMs: 100 } });
    browser = await launchBrowser();
    const made = await makeTenant(h, { name: 'Acme Ltd', entitlements: ['integrations', 'integration_hub'] });
    tenant = made.id;
    const admin = await makeUser(h, tenant, { role: 'COMPANY_IT_ADMIN' });
    api = await signIn(h, admin);
    hook = await makeWebhookConnection(h, api, receiver.url('/hooks/orders'), { displayName: NAME });
    tp = await newPage(browser);
    page = tp.page;
    page.setDefaultTimeout(WAIT);
    await tp.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.uiUrl });
    await signInThroughUi(page, h.uiUrl, admin, `/connections/${hook.id}/events`);
  });
  after(async () => {
    await tp?.close();
    await browser?.close();
    await h?.close();
    await receiver?.close();
    await other?.close();
  });

  test('“Send test event” sends one, and says how it landed', { skip, timeout: 120_000 }, async () => {
    await shown(heading(NAME));
    await shown(page.getByRole('heading', { level: 2, name: 'No events yet' }));
    await look('connection-page-empty');

    await button('Send test event').click();
    const result = page.getByRole('region', { name: 'Test event' });
    await shown(result.getByText('The test event was delivered.'));
    await shown(result.getByText('The receiver answered 200'));
    const [got] = await receiver.waitFor(1, WAIT);
    assert.ok(got, 'the receiver got no test event');
    assert.equal(JSON.parse(got.body).type, 'hubgate.test', 'the test event is not of type hubgate.test');

    // The log shows it, tagged as a test.
    const row = page.getByRole('row').filter({ hasText: 'hubgate.test' });
    await shown(row.getByText('Delivered', { exact: true }));
    await shown(row.getByText('test', { exact: true }));
    await look('connection-test-delivered');
  });

  test(
    'a failing receiver: the test says so, and the delivery’s page shows what it answered',
    { skip, timeout: 120_000 },
    async () => {
      failing = true;
      await button('Dismiss the test result').click();
      await button('Send test event').click();
      const result = page.getByRole('region', { name: 'Test event' });
      await shown(result.getByText(/The test event was not delivered/));
      await shown(result.getByText('The receiver answered 503'));
      await shown(result.getByText('database is locked'));
      await look('connection-test-failed');

      await result.getByRole('link', { name: 'View the test delivery' }).click();
      await shown(heading('hubgate.test'));
      // The payload as delivered, formatted, copied by its button.
      const payload = page.getByRole('region', { name: 'Payload JSON' });
      await shown(payload);
      await button('Copy payload').click();
      await shown(button('Copied'));
      const copied = JSON.parse(await clipboard(page)) as { id: string; type: string };
      assert.equal(copied.type, 'hubgate.test', 'the copied payload is not the test event');
      assert.match(
        await payload.innerText(),
        /\n {2}"type": "hubgate\.test"/,
        'the payload is not formatted JSON',
      );

      // Each attempt: what was sent (method, URL, headers) and what came back (status, headers, body).
      // The newest attempt is open (the one retried a second later, if it came already).
      const response = page.getByRole('region', { name: /^Response of attempt \d$/ }).first();
      await shown(response.getByText('503', { exact: true }));
      await shown(response.getByRole('cell', { name: 'application/json' }));
      assert.match(
        await response.getByRole('region', { name: /^Response body of attempt \d$/ }).innerText(),
        /"error": "database is locked"/,
        "the receiver's answer is not shown in the attempt's response body",
      );
      const request = page.getByRole('region', { name: /^Request of attempt \d$/ }).first();
      await shown(request.getByText(receiver.url('/hooks/orders')));
      await shown(request.getByRole('rowheader', { name: 'webhook-signature' }));
      await look('delivery-detail-failed');

      // On a phone the page fits the screen; wide blocks scroll in their own box.
      await page.setViewportSize({ width: 390, height: 844 });
      const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      assert.ok(width <= 390, `the delivery page is ${width} px wide on a 390 px screen`);
      await screenshot(page, 'delivery-detail-phone');
      await page.setViewportSize({ width: 1280, height: 800 });

      await page.getByRole('link', { name: NAME }).click();
      await shown(heading(NAME));
    },
  );

  test(
    'pausing shows why and since when; events meanwhile are skipped, and resuming replays them',
    { skip, timeout: 180_000 },
    async () => {
      failing = false;
      await openConnection(hook.id, NAME);
      // By keyboard: Enter opens the confirmation, Escape closes it and gives the focus back.
      const pause = button('Pause deliveries');
      await pause.focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: `Pause deliveries to “${NAME}”?` });
      await shown(dialog.getByText('skipped'));
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      await eventually(async () =>
        assert.ok(await hasFocus(pause), 'the focus did not return to “Pause deliveries”'),
      );
      await pause.click();
      await dialog.getByRole('button', { name: 'Pause deliveries' }).click();
      const banner = page.getByRole('region', { name: 'Deliveries are paused' });
      await shown(banner.getByText(/was paused by hand/));
      assert.equal(await button('Send test event').count(), 0, 'a paused connection offers a test event');

      // 22 events while paused: each is a skipped delivery, and nothing reaches the receiver.
      const before = receiver.received.length;
      for (let i = 0; i < 22; i += 1) {
        const published = await publishEvent(h, api, { type: 'employee.updated', data: { n: i } });
        assert.equal(published.body.deliveries, 1, 'a paused connection does not count its skipped delivery');
      }
      await waitForDeliveries(h, api, hook.id, (d) => d.filter((x) => x.status === 'skipped').length >= 20, {
        message: 'the events published while paused to be skipped',
      });
      assert.equal(receiver.received.length, before, 'an event reached a paused connection');

      await page.reload();
      await shown(banner.getByText('So far 22 deliveries were skipped.'));
      await look('connection-paused-banner');

      // The connections list shows it paused, and why.
      await page.goto(`${h.uiUrl}/connections`);
      const listed = page.getByRole('row').filter({ hasText: NAME });
      await shown(listed.getByText('Paused', { exact: true }));
      await shown(listed.getByText('Paused by hand'));
      await look('connections-list-paused');

      // Resume offers the skipped deliveries, counted, and sends them.
      await openConnection(hook.id, NAME);
      await banner.getByRole('button', { name: 'Resume deliveries' }).click();
      const resume = page.getByRole('dialog', { name: `Resume deliveries to “${NAME}”?` });
      await shown(resume.getByText('22 deliveries were'));
      const replay = resume.getByRole('checkbox', { name: /Send the skipped deliveries too/ });
      assert.equal(
        await replay.isChecked(),
        true,
        'replaying the skipped deliveries is not offered by default',
      );
      await look('connection-resume-dialog');
      await resume.getByRole('button', { name: 'Resume deliveries' }).click();
      await shown(page.getByRole('status').filter({ hasText: '22 skipped deliveries are queued again' }));
      await banner.waitFor({ state: 'detached' });
      await receiver.waitFor(before + 22, WAIT);
    },
  );

  test(
    'the log pages by cursor, and a new filter starts from its first page',
    { skip, timeout: 120_000 },
    async () => {
      await openConnection(hook.id, NAME, '?eventType=employee.*');
      await shown(page.getByRole('link', { name: 'Older entries →' }));
      const rows = page.getByRole('table', { name: /Deliveries to/ }).getByRole('row');
      await eventually(async () =>
        assert.equal(await rows.count(), 21, 'the first page does not hold 20 deliveries under its header'),
      );
      await page.getByRole('link', { name: 'Older entries →' }).click();
      await page.waitForURL((url) => url.searchParams.has('cursor'));
      assert.equal(new URL(page.url()).searchParams.get('eventType'), 'employee.*', 'paging lost the filter');
      await shown(page.getByRole('link', { name: 'First page' }));
      await eventually(async () =>
        assert.equal(await rows.count(), 3, 'the second page does not hold the last 2 deliveries'),
      );

      // A filter changed: the cursor, made for the old filters, is dropped.
      await page.getByRole('combobox', { name: 'Status' }).selectOption({ label: 'Delivered' });
      await page.waitForURL((url) => url.searchParams.get('status') === 'delivered');
      assert.equal(new URL(page.url()).searchParams.get('cursor'), null, 'a new filter kept the old cursor');
      assert.equal(
        new URL(page.url()).searchParams.get('eventType'),
        'employee.*',
        'a new filter lost the others',
      );
    },
  );

  test(
    '“Recover failed deliveries” counts them before confirming, and they are delivered once the receiver is fixed',
    { skip, timeout: 180_000 },
    async () => {
      failing = true;
      for (const n of [1, 2, 3]) await publishEvent(h, api, { type: 'invoice.paid', data: { n } });
      await waitForDeliveries(
        h,
        api,
        hook.id,
        (d) => d.filter((x) => x.eventType === 'invoice.paid' && x.status === 'failed').length === 3,
        { message: 'the three invoices to fail', timeoutMs: WAIT },
      );
      const failed = await log(hook.id, '?status=failed');
      const expected = failed.length;
      assert.ok(expected >= 3, 'fewer than three failed deliveries in the log');

      await openConnection(hook.id, NAME);
      await button('Recover failed deliveries').click();
      const dialog = page.getByRole('dialog', { name: `Recover failed deliveries of “${NAME}”` });
      const range = dialog.getByRole('combobox', { name: 'Created in' });
      assert.equal(await range.inputValue(), '24h', 'the range does not default to the last 24 hours');
      await shown(
        dialog.getByRole('status').filter({ hasText: `${expected} deliveries will be sent again` }),
      );
      await look('connection-recover-dialog');

      // A custom range that starts now holds none.
      await range.selectOption('custom');
      const from = dialog.getByLabel('From');
      await from.fill(new Date(Date.now() + 60_000).toISOString().slice(0, 16));
      await shown(dialog.getByText('there is nothing to recover'));
      assert.equal(
        await dialog.getByRole('button', { name: /^Recover/ }).isDisabled(),
        true,
        'an empty range can be recovered',
      );
      await range.selectOption('24h');
      await shown(
        dialog.getByRole('status').filter({ hasText: `${expected} deliveries will be sent again` }),
      );

      failing = false;
      await dialog.getByRole('button', { name: `Recover ${expected} deliveries` }).click();
      await shown(page.getByRole('status').filter({ hasText: `${expected} deliveries are queued again` }));
      await waitForDeliveries(h, api, hook.id, (d) => d.every((x) => x.status !== 'failed'), {
        message: 'the recovered deliveries to be delivered',
        timeoutMs: WAIT,
      });
      assert.equal((await log(hook.id, '?status=failed')).length, 0, 'a recovered delivery is still failed');
      const invoices = page.getByRole('row').filter({ hasText: 'invoice.paid' });
      await eventually(async () => {
        await button(/^Refresh/).click();
        assert.equal(
          await invoices.filter({ hasText: 'Delivered' }).count(),
          3,
          'the recovered invoices do not show as delivered in the log',
        );
      });
    },
  );

  test('the log’s filters live in the URL and survive a reload', { skip, timeout: 120_000 }, async () => {
    const query = '?status=delivered,failed&eventType=invoice.*&responseStatus=2xx&test=false';
    await openConnection(hook.id, NAME, query);
    const invoices = page.getByRole('row').filter({ hasText: 'invoice.paid' });
    const check = async (label: string) => {
      await eventually(async () =>
        assert.equal(
          await invoices.count(),
          3,
          `${label}: the filtered log does not show the three invoices`,
        ),
      );
      assert.equal(
        await page.getByRole('row').filter({ hasText: 'employee.updated' }).count(),
        0,
        `${label}: the event type filter lets other types through`,
      );
      assert.equal(
        await page.getByRole('combobox', { name: 'Status' }).inputValue(),
        'several',
        `${label}: two statuses do not show as several`,
      );
      assert.equal(
        await page.getByRole('checkbox', { name: 'Failed', exact: true }).isChecked(),
        true,
        `${label}: the failed status is not ticked`,
      );
      assert.equal(
        await page.getByRole('textbox', { name: 'Event type' }).inputValue(),
        'invoice.*',
        `${label}: the event type filter is not shown`,
      );
      assert.equal(
        await page.getByRole('combobox', { name: 'Response' }).inputValue(),
        '2xx',
        `${label}: the response filter is not shown`,
      );
      assert.equal(
        await page.getByRole('combobox', { name: 'Test events' }).inputValue(),
        'false',
        `${label}: the test filter is not shown`,
      );
    };
    await check('opened');
    await look('connection-log-filtered');
    await page.reload();
    await check('reloaded');

    // A delivery's page and back: the log is as it was left, filters and all.
    await invoices
      .first()
      .getByRole('link', { name: /^Details of evt_/ })
      .click();
    await shown(heading('invoice.paid'));
    await page.getByRole('link', { name: NAME }).click();
    await shown(heading(NAME));
    assert.deepEqual(
      Object.fromEntries(new URL(page.url()).searchParams),
      Object.fromEntries(new URLSearchParams(query)),
      'back from a delivery lost the filters',
    );
    await check('back from a delivery');

    // Typed filters apply with the form: one the API would refuse is said on its field, one that
    // matches nothing says so.
    const eventId = page.getByRole('textbox', { name: 'Event ID' });
    await eventId.fill('order-42');
    await button('Apply filters').click();
    await shown(page.getByText('An event ID is evt_ followed by 22 letters and digits.'));
    assert.equal(
      await eventId.getAttribute('aria-invalid'),
      'true',
      'the refused event ID is not marked invalid',
    );
    const unknown = `evt_${'0'.repeat(22)}`;
    await eventId.fill(unknown);
    await button('Apply filters').click();
    await page.waitForURL((url) => url.searchParams.get('eventId') === unknown);
    await shown(page.getByRole('heading', { level: 2, name: 'No deliveries match these filters' }));
    await button('Clear filters').click();
    await page.waitForURL((url) => url.search === '');
    await shown(page.getByRole('row').filter({ hasText: 'employee.updated' }));
    assert.equal(
      await page.getByRole('combobox', { name: 'Status' }).inputValue(),
      '',
      'clearing the filters leaves a status chosen',
    );
  });

  test(
    'editing: the name and URL change; a new host unbinds an HTTP connection’s credentials',
    { skip, timeout: 120_000 },
    async () => {
      await openConnection(hook.id, NAME);
      await button('Edit').click();
      let dialog = page.getByRole('dialog', { name: `Edit “${NAME}”` });
      await dialog.getByLabel('Display name').fill('Orders webhook (v2)');
      await dialog.getByRole('textbox', { name: 'Receiver URL' }).fill(receiver.url('/hooks/orders/v2'));
      await look('connection-edit-dialog');
      await dialog.getByRole('button', { name: 'Save changes' }).click();
      await shown(heading('Orders webhook (v2)'));
      await shown(page.getByText(receiver.url('/hooks/orders/v2')));
      await shown(page.getByRole('status').filter({ hasText: 'Saved the changes' }));

      // An HTTP connection sends its header to the receiver: moving it to another host unbinds it.
      const created = await h.request<{ id: string }>('POST', CONNECTIONS, {
        session: api,
        body: { connectorKey: 'http', displayName: 'Billing system', url: receiver.url('/billing') },
      });
      assert.equal(created.status, 201, created.text);
      const bound = await h.request('PUT', `${CONNECTIONS}/${created.body.id}/credentials`, {
        session: api,
        body: { headerName: 'X-Api-Key', headerValue: 'k-123' },
      });
      assert.equal(bound.status, 200, bound.text);
      await openConnection(created.body.id, 'Billing system');
      await button('Edit').click();
      dialog = page.getByRole('dialog', { name: 'Edit “Billing system”' });
      // Beside the URL, before anything is typed: what a new host does to credentials and queued deliveries.
      await shown(dialog.getByText(/a new host unbinds them, and the deliveries already queued are kept as/));
      await dialog.getByRole('textbox', { name: 'Receiver URL' }).fill(other.url('/billing'));
      await shown(dialog.getByText(/hubgate unbinds them/));
      await shown(dialog.getByText(/kept as skipped; once the credentials are bound/));
      await dialog.getByRole('button', { name: 'Save changes' }).click();
      const notice = page
        .getByRole('status')
        .filter({ hasText: 'credentials of “Billing system” were unbound' });
      await shown(notice);
      await shown(page.getByText('Needs credentials'));
      await look('connection-edit-unbound');
      await notice.getByRole('button', { name: 'Bind credentials' }).click();
      await shown(page.getByRole('dialog', { name: 'Bind credentials to “Billing system”' }));
      await page.keyboard.press('Escape');
    },
  );

  test(
    'a receiver that answers 410 Gone pauses its connection, and the banner says so',
    { skip, timeout: 120_000 },
    async () => {
      const gone = await startReceiver((_request, _index, response: ServerResponse) => {
        response.statusCode = 410;
        response.end('gone');
      });
      try {
        const connection = await makeWebhookConnection(h, api, gone.url('/old'), { displayName: 'Old CRM' });
        await publishEvent(h, api, { type: 'employee.created', data: {} });
        await openConnection(connection.id, 'Old CRM');
        const banner = page.getByRole('region', { name: 'Deliveries are paused' });
        await eventually(async () => {
          if (await banner.isVisible()) return;
          await page.reload();
          await shown(heading('Old CRM'));
          assert.ok(await banner.isVisible(), 'the connection was not paused after 410 Gone');
        });
        await shown(banner.getByText(/paused because the receiver answered 410 Gone/));
        await look('connection-paused-gone');
        await page.setViewportSize({ width: 390, height: 844 });
        const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
        assert.ok(width <= 390, `the connection page is ${width} px wide on a 390 px screen`);
        await screenshot(page, 'connection-paused-phone');
        await page.setViewportSize({ width: 1280, height: 800 });
      } finally {
        await gone.close();
      }
    },
  );

  test(
    'a member reads the page and the delivery’s page, and is offered no action',
    { skip, timeout: 120_000 },
    async () => {
      const member = await makeUser(h, tenant, { role: 'MEMBER' });
      const other = await newPage(browser, { colorScheme: 'dark' });
      try {
        other.page.setDefaultTimeout(WAIT);
        await signInThroughUi(other.page, h.uiUrl, member, `/connections/${hook.id}/events`);
        const memberPage = other.page;
        await shown(memberPage.getByRole('link', { name: /^Details of evt_/ }));
        for (const name of ['Send test event', 'Recover failed deliveries', 'Pause deliveries', 'Edit']) {
          assert.equal(
            await memberPage.getByRole('button', { name, exact: true }).count(),
            0,
            `a member is offered “${name}”`,
          );
        }
        await memberPage
          .getByRole('link', { name: /^Details of evt_/ })
          .first()
          .click();
        await shown(memberPage.getByRole('region', { name: 'Payload JSON' }));
        assert.equal(
          await memberPage.getByRole('button', { name: /^Retry/ }).count(),
          0,
          'a member is offered Retry',
        );
        await assertNoSeriousViolations(memberPage, 'delivery page for a member');
      } finally {
        await other.close();
      }
    },
  );
});
