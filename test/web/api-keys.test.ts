import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import {
  assertNoPageErrors,
  assertNoSeriousViolations,
  browserSkipReason,
  eventually,
  gone,
  hasFocus,
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
import { assertNoLeak, inDays, makeKey, makeTenant, makeUser, signIn } from '../helpers/factories.js';

// The API keys and audit log pages, walked as a person: by role and accessible name. Skipped test by
// test (not as a suite) when Chromium is missing, so the run's totals count them.
const skip = browserSkipReason();

const DAY_MS = 24 * 60 * 60 * 1000;
const SECRET = /^tnt_[A-Za-z0-9]{38}$/;

describe('API keys and audit log pages', () => {
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

  /** The automation API as the key's holder calls it. */
  const capabilities = (secret: string) =>
    h.request('GET', '/api/v1/automation/capabilities', { token: secret });

  /** Reads the secret shown once in the dialog, copies it with the Copy button, checks the clipboard. */
  async function copySecret(tp: TestPage, dialog: Locator): Promise<string> {
    const field = dialog.getByRole('textbox', { name: 'API key secret' });
    await visible(field);
    const secret = await field.inputValue();
    assert.match(secret, SECRET, 'the secret shown in the dialog is not a tenant API key');
    await dialog.getByRole('button', { name: 'Copy', exact: true }).click();
    await visible(dialog.getByRole('button', { name: 'Copied', exact: true }));
    assert.equal(
      await tp.page.evaluate('navigator.clipboard.readText()'),
      secret,
      'the Copy button put something other than the secret on the clipboard',
    );
    return secret;
  }

  async function rowOf(page: Page, name: string): Promise<Locator> {
    const row = page
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: new RegExp(name) }) });
    await visible(row);
    return row;
  }

  /** Every place a secret must never be: the page's storage, its URL, any request's URL. */
  async function assertNotStored(tp: TestPage, requested: string[], secrets: string[]) {
    // A string, not a function: the test's compiler would add helpers the page does not have.
    const stored = String(
      await tp.page.evaluate(`[localStorage, sessionStorage]
        .flatMap((storage) => Object.keys(storage).map((name) => name + '=' + storage.getItem(name)))
        .join('\\n')`),
    );
    for (const secret of secrets) {
      assert.ok(!stored.includes(secret), 'a secret was written to web storage');
      assert.ok(!tp.page.url().includes(secret), 'a secret is in the page URL');
      assert.ok(!requested.some((url) => url.includes(secret)), 'a secret was in a requested URL');
    }
  }

  test(
    'an admin creates, copies, rotates and revokes keys, and the audit log tells the story',
    { skip, timeout: 300_000 },
    async () => {
      // Only Integrations: the Integration hub module shows as not available.
      const tenant = await makeTenant(h, { entitlements: ['integrations'] });
      const admin = await makeUser(h, tenant.id, { role: 'COMPANY_IT_ADMIN' });
      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      await tp.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.uiUrl });
      const requested: string[] = [];
      page.on('request', (request) => requested.push(request.url()));
      const secrets: string[] = [];
      try {
        await signInThroughUi(page, h.uiUrl, admin);
        const nav = page.getByRole('navigation', { name: 'Main' });
        await nav.getByRole('link', { name: 'API keys' }).click();

        // Empty: what a key is for, and how to make one.
        await visible(page.getByRole('heading', { level: 1, name: 'API keys' }));
        await visible(page.getByRole('heading', { name: 'No API keys yet' }));
        await visible(page.getByText('Authorization: Bearer tnt_…'));
        await visible(page.getByRole('heading', { name: 'Handling keys safely' }));
        await screenshot(page, 'api-keys-empty');
        await assertNoSeriousViolations(page, 'api keys empty');

        // Create "ci deploy" with two scopes and the default expiry, by keyboard.
        await page.getByRole('button', { name: 'Create key' }).focus();
        await page.keyboard.press('Enter');
        let dialog = page.getByRole('dialog', { name: 'Create an API key' });
        await visible(dialog);
        const integrations = dialog.getByRole('group', { name: 'Integrations', exact: true });
        await visible(integrations.getByRole('checkbox', { name: 'Read', exact: true }));
        const hub = dialog.getByRole('group', { name: 'Integration hub', exact: true });
        assert.equal(
          await hub.getByRole('checkbox', { name: 'Read', exact: true }).isDisabled(),
          true,
          'a scope of a module the tenant is not entitled to can be ticked',
        );
        await visible(hub.getByText('not entitled to Integration hub'));
        const expires = dialog.getByRole('combobox', { name: 'Expires' });
        assert.equal(await expires.inputValue(), '90', 'the expiry does not default to 90 days');
        assert.match(
          (await expires.locator('option:checked').textContent()) ?? '',
          /^In 90 days/,
          'the default expiry is not labelled "In 90 days"',
        );

        const name = dialog.getByRole('textbox', { name: 'Name' });
        await eventually(async () => assert.equal(await hasFocus(name), true, 'the name field has no focus'));

        // Submitting empty says what is missing, on the fields, and goes back to the first.
        await dialog.getByRole('button', { name: 'Create key' }).click();
        await visible(dialog.getByText('Enter a name.'));
        await visible(dialog.getByText('Choose at least one scope.'));
        await eventually(async () =>
          assert.equal(await hasFocus(name), true, 'focus did not return to the name'),
        );

        await page.keyboard.type('ci deploy');
        await page.keyboard.press('Tab');
        await page.keyboard.press('Space');
        await page.keyboard.press('Tab');
        await page.keyboard.press('Space');
        assert.equal(
          await integrations.getByRole('checkbox', { name: 'Read', exact: true }).isChecked(),
          true,
          'the Read scope is not ticked by keyboard',
        );
        assert.equal(
          await integrations.getByRole('checkbox', { name: 'Operate', exact: true }).isChecked(),
          true,
          'the Operate scope is not ticked by keyboard',
        );
        assert.equal(await name.inputValue(), 'ci deploy', 'the typed key name was not kept');
        await screenshot(page, 'api-keys-create');
        await assertNoSeriousViolations(page, 'api keys create dialog');
        const createdAt = Date.now();
        await dialog.getByRole('button', { name: 'Create key' }).click();

        dialog = page.getByRole('dialog', { name: 'Save your API key' });
        await visible(dialog);
        await visible(dialog.getByText('This is the only time it is shown.'));
        await screenshot(page, 'api-keys-secret');
        await assertNoSeriousViolations(page, 'api keys secret shown');
        const first = await copySecret(tp, dialog);
        secrets.push(first);
        // Copied: "Done" closes without asking.
        await dialog.getByRole('button', { name: 'Done' }).click();
        await gone(dialog);
        const ciRow = await rowOf(page, 'ci deploy');
        await visible(ciRow.getByText('Active', { exact: true }));
        await visible(ciRow.getByText('Integrations · Read', { exact: true }));
        await visible(ciRow.getByText('Integrations · Operate', { exact: true }));
        await visible(ciRow.getByText('Never', { exact: true }));
        await visible(ciRow.getByText(`${first.slice(0, 12)}…`, { exact: true }));

        // The secret works for automation, with exactly those scopes, for ~90 days.
        const caps = await capabilities(first);
        assert.equal(caps.status, 200, caps.text);
        assert.deepEqual(
          [...caps.body.key.scopes].sort(),
          ['integrations:OPERATOR', 'integrations:READER'],
          'the new key does not hold exactly the two scopes ticked',
        );
        const lifetime = new Date(caps.body.key.expiresAt).getTime() - createdAt;
        assert.ok(
          Math.abs(lifetime - 90 * DAY_MS) < 10 * 60 * 1000,
          `expires in ${lifetime} ms, not 90 days`,
        );
        // Last used shows once the key was used.
        await eventually(async () => {
          await page.reload();
          const row = await rowOf(page, 'ci deploy');
          assert.equal(
            await row.getByText('Never', { exact: true }).count(),
            0,
            "the key's row still says it was never used after it was used",
          );
        });

        // A second key, closed without copying: the guard asks first.
        await page.getByRole('button', { name: 'Create key' }).click();
        dialog = page.getByRole('dialog', { name: 'Create an API key' });
        await visible(dialog);
        await dialog.getByRole('textbox', { name: 'Name' }).fill('nightly report');
        await integrations.getByRole('checkbox', { name: 'Read', exact: true }).check();
        await dialog.getByRole('button', { name: 'Create key' }).click();
        dialog = page.getByRole('dialog', { name: 'Save your API key' });
        const nightly = await dialog.getByRole('textbox', { name: 'API key secret' }).inputValue();
        assert.match(nightly, SECRET, "the second key's secret is not a tenant API key");
        secrets.push(nightly);
        await page.keyboard.press('Escape');
        const guard = dialog.getByRole('alertdialog', { name: /won’t see this secret again/ });
        await visible(guard);
        await screenshot(page, 'api-keys-close-guard');
        await assertNoSeriousViolations(page, 'api keys close guard');
        await guard.getByRole('button', { name: 'Go back' }).click();
        await gone(guard);
        assert.equal(
          await dialog.getByRole('textbox', { name: 'API key secret' }).inputValue(),
          nightly,
          'going back from the close guard lost the secret shown',
        );
        await dialog.getByRole('button', { name: 'Done' }).click();
        await visible(guard);
        await guard.getByRole('button', { name: 'Close anyway' }).click();
        await gone(dialog);
        await rowOf(page, 'nightly report');

        // Rotate with a one-hour overlap: the old and the new secret both work.
        await page.getByRole('button', { name: 'Rotate ci deploy' }).click();
        dialog = page.getByRole('dialog', { name: 'Rotate “ci deploy”' });
        await visible(dialog);
        await dialog.getByRole('radio', { name: 'Keep the old secret working for 1 hour' }).check();
        assert.match(
          (await dialog
            .getByRole('combobox', { name: 'New expiry' })
            .locator('option:checked')
            .textContent()) ?? '',
          /^Keep the current expiry/,
          'rotating does not offer to keep the current expiry by default',
        );
        await screenshot(page, 'api-keys-rotate');
        await assertNoSeriousViolations(page, 'api keys rotate dialog');
        await dialog.getByRole('button', { name: 'Rotate key' }).click();
        dialog = page.getByRole('dialog', { name: 'Save the new secret of “ci deploy”' });
        await visible(dialog);
        const second = await copySecret(tp, dialog);
        secrets.push(second);
        assert.notEqual(second, first, 'rotating showed the old secret again');
        await dialog.getByRole('button', { name: 'Done' }).click();
        await gone(dialog);
        assert.equal((await capabilities(first)).status, 200, 'the old secret stopped during the overlap');
        assert.equal((await capabilities(second)).status, 200, 'the new secret does not work');

        // Rotate with no overlap: the old secret is refused at once.
        await page.getByRole('button', { name: 'Rotate ci deploy' }).click();
        dialog = page.getByRole('dialog', { name: 'Rotate “ci deploy”' });
        await dialog.getByRole('radio', { name: 'Stop the old secret now' }).check();
        await dialog.getByRole('button', { name: 'Rotate key' }).click();
        dialog = page.getByRole('dialog', { name: 'Save the new secret of “ci deploy”' });
        await visible(dialog);
        await visible(dialog.getByText('The old one no longer works.'));
        const third = await copySecret(tp, dialog);
        secrets.push(third);
        await dialog.getByRole('button', { name: 'Done' }).click();
        await gone(dialog);
        assert.equal((await capabilities(second)).status, 401, 'the old secret still works');
        assert.equal((await capabilities(first)).status, 401, 'the first secret works again');
        assert.equal((await capabilities(third)).status, 200, 'the new secret does not work');

        // Revoke, after a confirmation that names the key.
        await page.getByRole('button', { name: 'Revoke ci deploy' }).click();
        dialog = page.getByRole('dialog', { name: 'Revoke “ci deploy”?' });
        await visible(dialog);
        await visible(dialog.getByText(/refused from now on, within a second on every hubgate instance/));
        await screenshot(page, 'api-keys-revoke');
        await assertNoSeriousViolations(page, 'api keys revoke confirmation');
        await dialog.getByRole('button', { name: 'Revoke key' }).click();
        await gone(dialog);
        await visible(page.getByText('“ci deploy” is revoked.'));
        await eventually(async () => {
          const row = await rowOf(page, 'ci deploy');
          assert.equal(
            await row.getByText('Revoked', { exact: true }).count(),
            1,
            "the revoked key's row does not say revoked",
          );
          assert.equal(await row.getByRole('button').count(), 0, 'a revoked key still offers actions');
        });
        // The button that opened the confirmation is gone; the focus stays on the page, not lost.
        await eventually(async () =>
          assert.equal(
            await page.evaluate('document.activeElement === document.body'),
            false,
            'the focus was lost to the page body after revoking',
          ),
        );
        assert.equal((await capabilities(third)).status, 401, 'the revoked key still works');

        // A key revoked elsewhere while its rotate dialog is open: the 409 is said in words.
        const session = await signIn(h, admin);
        const listed = await h.request('GET', '/api/v1/company/api-keys', { session });
        const nightlyId = listed.body.data.find((k: { name: string }) => k.name === 'nightly report').id;
        await page.getByRole('button', { name: 'Rotate nightly report' }).click();
        dialog = page.getByRole('dialog', { name: 'Rotate “nightly report”' });
        await visible(dialog);
        assert.equal(
          (await h.request('DELETE', `/api/v1/company/api-keys/${nightlyId}`, { session })).status,
          204,
          "the key could not be revoked through the API behind the dialog's back",
        );
        await dialog.getByRole('button', { name: 'Rotate key' }).click();
        await visible(dialog.getByRole('alert').filter({ hasText: 'cannot be rotated' }));
        await dialog.getByRole('button', { name: 'Cancel' }).click();
        await gone(dialog);

        // Every status at once: revoked (two), expired, active and expiring within a week.
        const expiring = await makeKey(h, session, {
          name: 'staging smoke test',
          scopes: ['integrations:READER'],
          expiresAt: new Date(Date.now() + 2 * 60 * 1000).toISOString(),
        });
        const soon = await makeKey(h, session, {
          name: 'partner sync',
          scopes: ['integrations:READER', 'integrations:ADMIN'],
          expiresAt: inDays(5),
        });
        h.setNow(new Date(Date.now() + 5 * 60 * 1000));
        try {
          await page.reload();
          await visible((await rowOf(page, 'staging smoke test')).getByText('Expired', { exact: true }));
          const soonRow = await rowOf(page, 'partner sync');
          await visible(soonRow.getByText('Active', { exact: true }));
          await visible(soonRow.getByText('Soon', { exact: true }));
          await visible((await rowOf(page, 'nightly report')).getByText('Revoked', { exact: true }));
          await screenshot(page, 'api-keys-list');
          await assertNoSeriousViolations(page, 'api keys list');
        } finally {
          h.setNow(null);
        }

        // The audit log tells what happened, in words.
        await nav.getByRole('link', { name: 'Audit log' }).click();
        await visible(page.getByRole('heading', { level: 1, name: 'Audit log' }));
        const table = page.getByRole('table');
        const action = (words: string) => table.getByText(words, { exact: true });
        await visible(action('Created an API key').first());
        await eventually(async () => {
          assert.equal(
            await action('Created an API key').count(),
            4,
            'the audit log does not show the four keys created',
          );
          assert.equal(
            await action('Rotated an API key').count(),
            2,
            'the audit log does not show the two rotations',
          );
          assert.equal(
            await action('Revoked an API key').count(),
            2,
            'the audit log does not show the two revocations',
          );
          assert.ok((await action('Signed in').count()) >= 2, 'the audit log does not show the sign-ins');
        });
        const created = table
          .getByRole('row')
          .filter({ hasText: 'Created an API key' })
          .filter({ hasText: '“ci deploy”' });
        await visible(created.getByText(/Integrations: Read, Operate/));
        await visible(created.getByText('You', { exact: true }));
        await visible(table.getByRole('row').filter({ hasText: 'old secret kept for 1 hour' }));
        await visible(table.getByRole('row').filter({ hasText: 'old secret stopped at once' }));
        const text = (await table.textContent()) ?? '';
        assert.doesNotMatch(text, /[{}]/, 'raw JSON in the audit log');
        await page.getByRole('button', { name: 'Refresh' }).click();
        await visible(page.getByRole('button', { name: 'Refresh' }));
        await screenshot(page, 'audit-log');
        await assertNoSeriousViolations(page, 'audit log');

        // No secret in web storage, a URL, a log or a second response.
        await assertNotStored(tp, requested, [...secrets, expiring.secret, soon.secret]);
        // The ones made in the browser never came back in a response here; those made through the API
        // exactly once, in their creation's answer; none is in a log.
        assertNoLeak(h, secrets, [expiring.secret, soon.secret]);
        assertNoPageErrors(tp, 'api keys walk');
      } finally {
        await tp.close();
      }
    },
  );

  test(
    'a member sees neither page in the navigation, and is told why at their URLs',
    { skip, timeout: 120_000 },
    async () => {
      const tenant = await makeTenant(h, { entitlements: ['integrations', 'integration_hub'] });
      const member = await makeUser(h, tenant.id, { role: 'MEMBER' });
      const tp = await newPage(browser, { colorScheme: 'dark' });
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      try {
        await signInThroughUi(page, h.uiUrl, member);
        const nav = page.getByRole('navigation', { name: 'Main' });
        await visible(nav.getByRole('link', { name: 'Overview' }));
        assert.equal(
          await nav.getByRole('link', { name: 'API keys' }).count(),
          0,
          'a member is offered the API keys page in the navigation',
        );
        assert.equal(
          await nav.getByRole('link', { name: 'Audit log' }).count(),
          0,
          'a member is offered the audit log in the navigation',
        );

        await page.goto(`${h.uiUrl}/api-keys`);
        await visible(page.getByRole('heading', { level: 1, name: 'API keys' }));
        await visible(page.getByText('Your role (Member) cannot manage API keys.'));
        assert.equal(
          await page.getByRole('button', { name: 'Create key' }).count(),
          0,
          'a member is offered the Create key button',
        );
        await screenshot(page, 'api-keys-member');
        await assertNoSeriousViolations(page, 'api keys member');

        await page.goto(`${h.uiUrl}/audit-log`);
        await visible(page.getByRole('heading', { level: 1, name: 'Audit log' }));
        await visible(page.getByText('Your role (Member) cannot read the audit log.'));
        await assertNoSeriousViolations(page, 'audit log member');
        // The page never asked the API for what the role may not see.
        assert.deepEqual(
          tp.httpErrors.filter((e) => e.includes('/api/v1/company/')),
          [],
          'the pages asked the API for what a member may not see',
        );
        assertNoPageErrors(tp, 'member pages');
      } finally {
        await tp.close();
      }
    },
  );
});
