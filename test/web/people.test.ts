import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
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
  type UiHarness,
} from '../helpers/browser.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

// The tenant's people (docs/api/people.md) walked as people do: an admin invites a colleague, who opens the
// link in a browser of their own, chooses a password and is signed in; the admin changes their role and
// removes them, and the colleague's page notices at its next request. Skipped test by test (not as a
// suite) when Chromium is missing, so the run's totals count them.
const skip = browserSkipReason();

const PASSWORD = 'a long enough passphrase';

const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name });
const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });

async function rowOf(page: Page, email: string): Promise<Locator> {
  const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: new RegExp(email) }) });
  await visible(row);
  return row;
}

describe('people', () => {
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

  test(
    'an admin invites a colleague who joins in their own browser; their role changes, then they are removed',
    { skip, timeout: 300_000 },
    async () => {
      const tenant = await makeTenant(h, { name: 'Acme Logistics', entitlements: ['integrations'] });
      const admin = await makeUser(h, tenant.id, { role: 'COMPANY_IT_ADMIN' });
      const colleague = `colleague.${Date.now()}@example.com`;
      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      await tp.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.uiUrl });
      const joiner = await newPage(browser);
      const requested: string[] = [];
      joiner.page.on('request', (request) => requested.push(request.url()));
      try {
        await signInThroughUi(page, h.uiUrl, admin);
        // Only a platform admin is offered the operator console.
        assert.equal(
          await nav(page).getByRole('link', { name: 'Operator console' }).count(),
          0,
          'a company IT admin is offered the operator console',
        );
        await nav(page).getByRole('link', { name: 'People' }).click();
        await visible(heading(page, 'People'));
        const me = await rowOf(page, admin.email);
        await visible(me.getByText('(you)'));
        await visible(me.getByText('Active', { exact: true }));
        await screenshot(page, 'people');
        await assertNoSeriousViolations(page, 'people');

        // The invitation: an address and a role (no platform admin for a company IT admin to give).
        await page.getByRole('button', { name: 'Invite someone' }).click();
        let dialog = page.getByRole('dialog', { name: 'Invite someone' });
        await visible(dialog);
        assert.equal(
          await dialog.getByRole('radio', { name: 'Platform admin' }).count(),
          0,
          'a company IT admin may make a platform admin',
        );
        await dialog.getByRole('button', { name: 'Invite', exact: true }).click();
        await visible(dialog.getByText('Enter an e-mail address like name@example.com.'));
        await dialog.getByLabel('E-mail address').fill(colleague);
        await dialog.getByRole('radio', { name: 'Member' }).check();
        await assertNoSeriousViolations(page, 'people invite dialog');
        await dialog.getByRole('button', { name: 'Invite', exact: true }).click();

        // The link, once: closing before copying asks first, as a key's secret does.
        dialog = page.getByRole('dialog', { name: 'Send the invitation link' });
        const field = dialog.getByRole('textbox', { name: 'Invitation link' });
        await visible(field);
        const link = await field.inputValue();
        assert.match(link, /\/invite#token=[A-Za-z0-9]{32}$/, 'the link shown is not an invitation link');
        assert.ok(link.startsWith(h.uiUrl), 'the invitation link is not at the UI’s address');
        await dialog.getByRole('button', { name: 'Done' }).click();
        await visible(dialog.getByRole('alertdialog', { name: 'You won’t see this link again.' }));
        await screenshot(page, 'people-invitation-link');
        await assertNoSeriousViolations(page, 'people invitation link, asking before it closes');
        await dialog.getByRole('button', { name: 'Go back' }).click();
        await dialog.getByRole('button', { name: 'Copy', exact: true }).click();
        await visible(dialog.getByRole('button', { name: 'Copied', exact: true }));
        assert.equal(
          await page.evaluate('navigator.clipboard.readText()'),
          link,
          'the Copy button put something other than the link on the clipboard',
        );
        await dialog.getByRole('button', { name: 'Done' }).click();
        await gone(dialog);
        await visible((await rowOf(page, colleague)).getByText('Invited', { exact: true }));

        // The colleague, in a browser of their own: whom it is for, a password, signed in.
        await joiner.page.goto(link);
        await visible(heading(joiner.page, 'Join hubgate'));
        await visible(joiner.page.getByText('You are invited to Acme Logistics on hubgate.'));
        assert.equal(
          await joiner.page.getByLabel('E-mail address').inputValue(),
          colleague,
          'the invitation page does not say whom the invitation is for',
        );
        await screenshot(joiner.page, 'invite');
        await assertNoSeriousViolations(joiner.page, 'invitation page');
        await joiner.page.getByLabel('Password', { exact: true }).fill(PASSWORD);
        await joiner.page.getByLabel('Repeat the password').fill('a different passphrase');
        await joiner.page.getByRole('button', { name: 'Join and sign in' }).click();
        await visible(joiner.page.getByText('The two passwords differ.'));
        await joiner.page.getByLabel('Repeat the password').fill(PASSWORD);
        await joiner.page.getByRole('button', { name: 'Join and sign in' }).click();
        await visible(heading(joiner.page, 'Welcome to Acme Logistics'));
        await visible(joiner.page.getByText(`You are signed in to Acme Logistics as ${colleague}.`));
        await visible(joiner.page.getByRole('button', { name: 'Add a passkey' }));
        assert.ok(!joiner.page.url().includes('token='), 'the used link stays in the address bar');
        const token = link.split('#token=')[1] ?? '';
        assert.ok(!requested.some((url) => url.includes(token)), 'the token was sent in a URL');
        await screenshot(joiner.page, 'invite-joined');
        await assertNoSeriousViolations(joiner.page, 'invitation page, joined');
        await joiner.page.getByRole('button', { name: 'Continue to hubgate' }).click();
        await visible(heading(joiner.page, 'Overview'));
        assert.equal(
          await nav(joiner.page).getByRole('link', { name: 'People' }).count(),
          0,
          'a member is offered the people page',
        );

        // The admin sees them active.
        await page.reload();
        let row = await rowOf(page, colleague);
        await visible(row.getByText('Active', { exact: true }));
        await visible(row.getByText('Member', { exact: true }));

        // The last admin cannot make themselves a member: said in words.
        await (
          await rowOf(page, admin.email)
        )
          .getByRole('button', { name: `Change role of ${admin.email}` })
          .click();
        dialog = page.getByRole('dialog', { name: `Change the role of ${admin.email}` });
        await visible(dialog);
        await dialog.getByRole('radio', { name: 'Member' }).check();
        await dialog.getByRole('button', { name: 'Change role' }).click();
        await visible(
          dialog
            .getByRole('alert')
            .filter({ hasText: 'You are the last person here who can manage keys and people' }),
        );
        await screenshot(page, 'people-last-admin');
        await assertNoSeriousViolations(page, 'people, the last admin refused');
        await dialog.getByRole('button', { name: 'Cancel' }).click();
        await gone(dialog);

        // The colleague becomes an executive.
        await row.getByRole('button', { name: `Change role of ${colleague}` }).click();
        dialog = page.getByRole('dialog', { name: `Change the role of ${colleague}` });
        await dialog.getByRole('radio', { name: 'Executive' }).check();
        await dialog.getByRole('button', { name: 'Change role' }).click();
        await gone(dialog);
        await visible(page.getByText(`${colleague} is now Executive.`));
        row = await rowOf(page, colleague);
        await visible(row.getByText('Executive', { exact: true }));

        // Removed, after a confirmation that names them.
        await row.getByRole('button', { name: `Remove ${colleague}` }).click();
        dialog = page.getByRole('dialog', { name: `Remove ${colleague}?` });
        await visible(dialog.getByText('every session they have ends at once'));
        await assertNoSeriousViolations(page, 'people remove confirmation');
        await dialog.getByRole('button', { name: 'Remove person' }).click();
        await gone(dialog);
        await visible(page.getByText(`${colleague} was removed: they can no longer sign in.`));
        await gone(page.getByRole('rowheader', { name: new RegExp(colleague) }));
        assertNoPageErrors(tp, 'people');

        // The colleague's page learns at its next request, and goes to sign-in saying why.
        await nav(joiner.page).getByRole('link', { name: 'Connections' }).click();
        await visible(heading(joiner.page, 'Sign in'));
        await visible(joiner.page.getByText('Your session has ended. Sign in again to continue.'));
      } finally {
        await joiner.close();
        await tp.close();
      }
    },
  );

  test('a platform admin finds the operator console in the navigation, and it opens', { skip }, async () => {
    const tenant = await makeTenant(h, { entitlements: ['integrations'] });
    const operator = await makeUser(h, tenant.id, { role: 'PLATFORM_ADMIN' });
    const tp = await newPage(browser);
    const { page } = tp;
    try {
      await signInThroughUi(page, h.uiUrl, operator);
      // A platform admin may invite a platform admin.
      await nav(page).getByRole('link', { name: 'People' }).click();
      await page.getByRole('button', { name: 'Invite someone' }).click();
      const dialog = page.getByRole('dialog', { name: 'Invite someone' });
      await visible(dialog.getByRole('radio', { name: 'Platform admin' }));
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await gone(dialog);

      await nav(page).getByRole('link', { name: 'Operator console' }).click();
      await page.waitForURL((url) => url.pathname === '/platform');
      await visible(heading(page, 'Operator console'));
      await page.getByLabel('Platform key', { exact: true }).fill(h.platformToken);
      await page.getByRole('button', { name: 'Open the console' }).click();
      await visible(heading(page, 'Monitoring'));
      assertNoPageErrors(tp, 'the operator console from the navigation');
    } finally {
      await tp.close();
    }
  });
});
