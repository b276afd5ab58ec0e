import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
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
import { makeSignedInTenant, makeUser, makeWebhookConnection } from '../helpers/factories.js';
import { startReceiver } from '../helpers/receiver.js';

// The sources pages (contract §22), walked as a person: a GitHub source made through the UI, a
// provider's requests sent to its ingest URL while its request log is open (they appear without a
// reload), a Standard Webhooks source whose generated secret is shown once, and a pause that the
// ingest URL obeys. Skipped test by test (not as a suite) when Chromium is missing, so the run's
// totals count them.
const skip = browserSkipReason();
const PHONE = { width: 390, height: 844 };

/** What GitHub sends: the exact body, signed with the webhook's secret. */
function githubRequest(secret: string, event: string, body: string, badSignature = false) {
  const digest = createHmac('sha256', badSignature ? `${secret}-not` : secret)
    .update(body)
    .digest('hex');
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': `sha256=${digest}`,
      'x-github-event': event,
      'x-github-delivery': randomUUID(),
    },
    body,
  };
}

describe('sources pages', () => {
  let h: UiHarness;
  let browser: Browser;
  before(async () => {
    if (skip) return;
    browser = await launchBrowser();
    // The connection below delivers to a receiver on 127.0.0.1.
    h = await startUiHarness({
      env: { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' },
    });
  });
  after(async () => {
    await browser?.close();
    await h?.close();
  });

  /** The ingest URL, as the page shows it, must be the harness's: the test sends there. */
  async function ingestUrlOn(where: Page | Locator): Promise<string> {
    const field = where.getByRole('textbox', { name: 'Ingest URL' }).first();
    await visible(field);
    const url = await field.inputValue();
    assert.match(url, /^http:\/\/localhost:\d+\/ingest\/src_[A-Za-z0-9]+$/, `the ingest URL reads ${url}`);
    assert.ok(url.startsWith(h.uiUrl), `the ingest URL ${url} is not at the app's PUBLIC_URL ${h.uiUrl}`);
    return url;
  }

  test(
    'a GitHub source made in the UI logs signed and badly signed requests live; Standard Webhooks shows its secret once; a pause answers 503',
    { skip, timeout: 300_000 },
    async (t) => {
      const { user, session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
      const receiver = await startReceiver(t);
      await makeWebhookConnection(h, session, receiver.url(), {
        displayName: 'Shop events',
        eventTypes: ['github.*'],
      });
      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      await tp.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.uiUrl });
      try {
        await signInThroughUi(page, h.uiUrl, user);
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sources' }).click();
        await visible(page.getByRole('heading', { level: 1, name: 'Sources' }));
        await visible(page.getByRole('heading', { name: 'No sources yet' }));
        await screenshot(page, 'sources-empty');
        await assertNoSeriousViolations(page, 'sources empty');

        // New source: GitHub is chosen first; a secret is required for it and said where it comes from.
        await page.getByRole('button', { name: 'New source' }).click();
        let dialog = page.getByRole('dialog', { name: 'New source' });
        await visible(dialog);
        const github = dialog.getByRole('radio', { name: 'GitHub' });
        assert.equal(await github.isChecked(), true, 'GitHub is not the scheme chosen first');
        assert.equal(
          await dialog.getByRole('textbox', { name: /Signature header/ }).count(),
          0,
          'the hmac scheme’s fields show for GitHub',
        );
        await visible(dialog.getByText(/The webhook secret you choose in GitHub/));
        await dialog.getByRole('button', { name: 'Create source' }).click();
        await visible(dialog.getByText('Enter a name.'));
        await visible(dialog.getByText('Paste the secret from GitHub.'));
        // The hmac scheme shows its own fields, and only it.
        await dialog.getByRole('radio', { name: 'Other: HMAC-SHA256' }).check();
        await visible(dialog.getByRole('textbox', { name: 'Signature header' }));
        await screenshot(page, 'sources-new-hmac');
        await github.check();
        await gone(dialog.getByRole('textbox', { name: 'Signature header' }));

        const secret = `gh-${randomUUID()}`;
        await dialog.getByRole('textbox', { name: 'Name' }).fill('GitHub: acme/shop');
        await dialog.getByLabel('Signing secret', { exact: true }).fill(secret);
        await screenshot(page, 'sources-new-github');
        await assertNoSeriousViolations(page, 'new source dialog');
        await dialog.getByRole('button', { name: 'Create source' }).click();

        dialog = page.getByRole('dialog', { name: 'Source created' });
        await visible(dialog);
        const ingestUrl = await ingestUrlOn(dialog);
        await dialog.getByRole('button', { name: 'Copy the ingest URL' }).click();
        await visible(dialog.getByRole('button', { name: 'Copy the ingest URL' }).getByText('Copied'));
        assert.equal(
          await page.evaluate('navigator.clipboard.readText()'),
          ingestUrl,
          'the Copy button put something other than the ingest URL on the clipboard',
        );
        assert.equal(
          await dialog.getByText('This is the only time it is shown.').count(),
          0,
          'a secret typed in is shown back as if generated',
        );
        await screenshot(page, 'sources-created');
        await dialog.getByRole('link', { name: /Open the request log/ }).click();

        // The request log, open and empty; the provider's requests arrive while it is on screen.
        await visible(page.getByRole('heading', { level: 1, name: 'GitHub: acme/shop' }));
        await visible(page.getByRole('heading', { name: 'No requests yet' }));
        assert.equal(await ingestUrlOn(page), ingestUrl, 'the source’s page shows another ingest URL');
        const body = JSON.stringify({ action: 'opened', number: 7, repository: { full_name: 'acme/shop' } });
        const signed = await fetch(ingestUrl, githubRequest(secret, 'pull_request', body));
        assert.equal(signed.status, 202, `a correctly signed request answered ${signed.status}`);
        const { id: eventId } = (await signed.json()) as { id: string };
        const forged = await fetch(ingestUrl, githubRequest(secret, 'push', '{"ref":"main"}', true));
        assert.equal(forged.status, 401, `a badly signed request answered ${forged.status}`);

        const accepted = page.getByRole('row').filter({ hasText: 'github.pull_request.opened' });
        await visible(accepted);
        await visible(accepted.getByText('Accepted', { exact: true }));
        await visible(accepted.getByText(eventId, { exact: true }));
        const refused = page.getByRole('row').filter({ hasText: 'Invalid signature' });
        await visible(refused);
        assert.equal(
          await page.getByRole('heading', { name: 'No requests yet' }).count(),
          0,
          'the empty state stays beside the requests',
        );
        // Newest first: the refused request came last.
        const rows = page.getByRole('table', { name: /Requests/ }).getByRole('row');
        assert.match(
          (await rows.nth(1).innerText()) ?? '',
          /Invalid signature/,
          'the newest request is not first',
        );

        // Expanded: the headers with the signature redacted, the body, and where the event went.
        await accepted.getByRole('button', { name: /Show the request of/ }).click();
        const headers = page.getByRole('table', { name: /^Headers of request/ });
        await visible(headers);
        await visible(headers.getByRole('row', { name: /x-hub-signature-256 \[redacted\]/ }));
        assert.equal(
          await page.getByText(/sha256=[0-9a-f]{64}/).count(),
          0,
          'a signature value is shown in the request log',
        );
        await visible(page.getByRole('region', { name: /^Body of request/ }).getByText(/"acme\/shop"/));
        const eventLink = page.getByRole('link', { name: 'in the event log of “Shop events”' });
        await visible(eventLink);
        await screenshot(page, 'source-request-log');
        await assertNoSeriousViolations(page, 'source request log');

        // The outcome filter, in the URL.
        await page.getByRole('combobox', { name: 'Outcome' }).selectOption('invalid_signature');
        await page.waitForURL((url) => url.searchParams.get('outcome') === 'invalid_signature');
        await gone(accepted);
        await visible(refused);

        // The phone: the log's rows are cards, nothing scrolls sideways.
        await page.setViewportSize(PHONE);
        await page.getByRole('combobox', { name: 'Outcome' }).selectOption('');
        await visible(accepted);
        const width = await page.evaluate<number>('document.documentElement.scrollWidth');
        assert.ok(
          width <= PHONE.width,
          `the source's page is ${width} px wide on a ${PHONE.width} px screen`,
        );
        await screenshot(page, 'source-request-log-phone');
        await assertNoSeriousViolations(page, 'source request log on a phone');
        await page.setViewportSize({ width: 1280, height: 800 });

        // The event link opens the connection's event log filtered to this event.
        await eventLink.click();
        await page.waitForURL(
          (url) => url.pathname.endsWith('/events') && url.searchParams.get('eventId') === eventId,
        );
        await page.goBack();

        // Pause through the UI: the ingest URL answers 503 with Retry-After, and the log says why.
        await page.getByRole('button', { name: 'Pause GitHub: acme/shop' }).click();
        await visible(page.getByText(/is paused: its ingest URL answers 503/));
        const paused = await fetch(ingestUrl, githubRequest(secret, 'push', '{"ref":"main"}'));
        assert.equal(paused.status, 503, `a paused source answered ${paused.status}`);
        assert.ok(paused.headers.get('retry-after'), 'a paused source answered 503 without Retry-After');
        await visible(page.getByRole('row').filter({ hasText: 'Paused' }).first());
        await visible(page.getByRole('button', { name: 'Resume GitHub: acme/shop' }));
        await screenshot(page, 'source-paused');

        // A Standard Webhooks source: the secret left empty is made by hubgate and shown once.
        await page.getByRole('link', { name: 'Sources', exact: true }).first().click();
        await visible(page.getByRole('heading', { level: 1, name: 'Sources' }));
        await visible(
          page.getByRole('row', { name: /GitHub: acme\/shop/ }).getByText('Paused', { exact: true }),
        );
        await page.getByRole('button', { name: 'New source' }).click();
        dialog = page.getByRole('dialog', { name: 'New source' });
        await dialog.getByRole('radio', { name: 'Standard Webhooks' }).check();
        await visible(dialog.getByText(/Leave it empty and hubgate makes one/));
        await dialog.getByRole('textbox', { name: 'Name' }).fill('Billing (Svix)');
        await dialog.getByRole('button', { name: 'Create source' }).click();
        dialog = page.getByRole('dialog', { name: 'Save the source’s secret' });
        await visible(dialog);
        await visible(dialog.getByText('This is the only time it is shown.'));
        const generated = await dialog.getByRole('textbox', { name: 'Signing secret' }).inputValue();
        assert.match(generated, /^whsec_[A-Za-z0-9+/=]{20,}$/, `the generated secret reads ${generated}`);
        await ingestUrlOn(dialog);
        await screenshot(page, 'sources-secret-once');
        await assertNoSeriousViolations(page, 'source secret shown once');
        // Closing uncopied asks first; then it is gone for good.
        await dialog.getByRole('button', { name: 'Done' }).click();
        await visible(dialog.getByText('You won’t see this secret again.'));
        await dialog.getByRole('button', { name: 'Close anyway' }).click();
        await gone(dialog);
        const listed = await h.request<{ data: Record<string, unknown>[] }>(
          'GET',
          '/api/v1/integrations/sources',
          {
            session,
          },
        );
        assert.ok(!listed.text.includes(generated), 'the generated secret is in the list');
        assert.ok(!listed.text.includes(secret), 'the typed secret is in the list');
        await visible(page.getByRole('row', { name: /Billing \(Svix\)/ }));
        await screenshot(page, 'sources-list');
        await assertNoSeriousViolations(page, 'sources list');
        await page.setViewportSize(PHONE);
        await screenshot(page, 'sources-list-phone');
        // The new-source dialog on a phone: every field within the screen's width.
        await page.getByRole('button', { name: 'New source' }).click();
        dialog = page.getByRole('dialog', { name: 'New source' });
        await visible(dialog);
        const dialogWidth = await dialog.evaluate((element) => element.scrollWidth);
        assert.ok(dialogWidth <= PHONE.width, `the new-source dialog is ${dialogWidth} px wide on a phone`);
        await screenshot(page, 'sources-new-phone');
        await dialog.getByRole('button', { name: 'Cancel' }).click();
        await gone(dialog);
        await page.setViewportSize({ width: 1280, height: 800 });

        // Rotate a Standard Webhooks source with the secret left empty: hubgate makes one, shown once.
        const billing = page.getByRole('row', { name: /Billing \(Svix\)/ });
        await billing.getByRole('button', { name: 'Rotate secret of Billing (Svix)' }).click();
        dialog = page.getByRole('dialog', { name: 'Rotate the secret of “Billing (Svix)”' });
        await dialog.getByRole('radio', { name: 'Stop the old secret now' }).check();
        await dialog.getByRole('button', { name: 'Rotate secret' }).click();
        dialog = page.getByRole('dialog', { name: 'Save the new secret of “Billing (Svix)”' });
        await visible(dialog.getByText(/The old secret no longer verifies/));
        const rotated = await dialog.getByRole('textbox', { name: 'Signing secret' }).inputValue();
        assert.match(rotated, /^whsec_/, `the rotated secret reads ${rotated}`);
        assert.notEqual(rotated, generated, 'the rotation made the same secret again');
        await dialog.getByRole('button', { name: 'Copy', exact: true }).click();
        await dialog.getByRole('button', { name: 'Done' }).click();
        await gone(dialog);

        // Rotate (a typed secret for GitHub) and delete, from the list.
        const row = page.getByRole('row', { name: /GitHub: acme\/shop/ });
        await row.getByRole('button', { name: 'Rotate secret of GitHub: acme/shop' }).click();
        dialog = page.getByRole('dialog', { name: 'Rotate the secret of “GitHub: acme/shop”' });
        await visible(dialog);
        await dialog.getByLabel('New signing secret', { exact: true }).fill(`${secret}-2`);
        await screenshot(page, 'source-rotate');
        await assertNoSeriousViolations(page, 'source rotate dialog');
        await dialog.getByRole('button', { name: 'Rotate secret' }).click();
        await gone(dialog);
        await visible(page.getByText(/has the new secret\. The old secret keeps verifying for 1 hour/));
        await row.getByRole('button', { name: 'Delete GitHub: acme/shop' }).click();
        dialog = page.getByRole('dialog', { name: 'Delete “GitHub: acme/shop”?' });
        await dialog.getByRole('button', { name: 'Delete source' }).click();
        await visible(page.getByText(/is deleted\. Its ingest URL answers 404/));
        await eventually(async () => {
          const deleted = await fetch(ingestUrl, githubRequest(secret, 'push', '{"ref":"main"}'));
          assert.equal(deleted.status, 404, `a deleted source answered ${deleted.status}`);
        });
        assertNoPageErrors(tp, 'sources pages');
      } finally {
        await tp.close();
      }
    },
  );

  test('a member reads the sources and their request logs, and is offered no change', { skip }, async () => {
    const { tenant, session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
    const created = await h.request<{ id: string }>('POST', '/api/v1/integrations/sources', {
      session,
      body: { name: 'Stripe payments', scheme: 'stripe', secret: `whsec_${randomUUID()}` },
    });
    assert.equal(created.status, 201, created.text);
    const member = await makeUser(h, tenant.id, { role: 'MEMBER' });
    const tp = await newPage(browser, { colorScheme: 'dark' });
    const { page } = tp;
    try {
      await signInThroughUi(page, h.uiUrl, member, '/sources');
      const row = page.getByRole('row', { name: /Stripe payments/ });
      await visible(row);
      await visible(row.getByText('Stripe', { exact: true }));
      assert.equal(
        await page.getByRole('button', { name: 'New source' }).count(),
        0,
        'a member is offered New source',
      );
      assert.equal(
        await row.getByRole('button', { name: /^(Pause|Rotate|Delete)/ }).count(),
        0,
        'a member is offered a change',
      );
      await row.getByRole('link', { name: /Stripe payments/ }).click();
      await visible(page.getByRole('heading', { level: 1, name: 'Stripe payments' }));
      await visible(page.getByRole('heading', { name: 'No requests yet' }));
      assert.equal(
        await page.getByRole('button', { name: /^Pause/ }).count(),
        0,
        'a member is offered Pause',
      );
      await assertNoSeriousViolations(page, 'source page for a member');
      assertNoPageErrors(tp, 'sources pages for a member');
    } finally {
      await tp.close();
    }
  });

  test(
    'a pause made by another person shows on the open list and source page without a reload',
    { skip },
    async () => {
      const { user, session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
      const created = await h.request<{ id: string }>('POST', '/api/v1/integrations/sources', {
        session,
        body: { name: 'Shop orders', scheme: 'shopify', secret: `shpss_${randomUUID()}` },
      });
      assert.equal(created.status, 201, created.text);
      const tp = await newPage(browser);
      const { page } = tp;
      try {
        await signInThroughUi(page, h.uiUrl, user, '/sources');
        const row = page.getByRole('row', { name: /Shop orders/ });
        await visible(row.getByText('Active', { exact: true }));
        const paused = await h.request('PATCH', `/api/v1/integrations/sources/${created.body.id}`, {
          session,
          body: { status: 'paused' },
        });
        assert.equal(paused.status, 200, paused.text);
        // The list reads itself again while it is open: no reload.
        await visible(row.getByText('Paused', { exact: true }));
        await row.getByRole('link', { name: /Shop orders/ }).click();
        await visible(page.getByRole('heading', { level: 1, name: 'Shop orders' }));
        await visible(page.getByRole('button', { name: 'Resume' }));
        const resumed = await h.request('PATCH', `/api/v1/integrations/sources/${created.body.id}`, {
          session,
          body: { status: 'active' },
        });
        assert.equal(resumed.status, 200, resumed.text);
        await visible(page.getByRole('button', { name: 'Pause' }));
      } finally {
        await tp.close();
      }
    },
  );
});
