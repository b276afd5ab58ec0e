import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import {
  assertNoPageErrors,
  browserSkipReason,
  launchBrowser,
  newPage,
  signInThroughUi,
  startUiHarness,
  visible,
  WAIT_MS,
  type UiHarness,
} from '../helpers/browser.js';
import { makeTenant, makeUser, signIn } from '../helpers/factories.js';

// What the People page says when the server refuses an invitation for the organization's sake, not
// the address's (docs/api/people.md): 100 pending invitations are the most (409), and a person gets
// at most 3 links an hour (429). Each refusal in its own words, where it belongs.
const skip = browserSkipReason();

describe('people: the limits on invitations', () => {
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
    'the 101st pending invitation says so in a notice, not as a taken address; a fourth link in an hour says when to try again',
    { skip, timeout: 300_000 },
    async () => {
      // One organization at its 100 pending invitations, another that sent one person 3 links.
      const full = await makeTenant(h, { entitlements: ['integrations'] });
      const fullAdmin = await makeUser(h, full.id, { role: 'COMPANY_IT_ADMIN' });
      const fullSession = await signIn(h, fullAdmin);
      for (let i = 0; i < 100; i++) {
        const email = `pending.${i}.${Date.now()}@example.com`;
        const r = await h.request('POST', '/api/v1/company/users', {
          session: fullSession,
          body: { email, role: 'MEMBER' },
        });
        assert.equal(r.status, 201, `invitation ${i + 1} answered ${r.status}: ${r.text}`);
      }
      const busy = await makeTenant(h, { entitlements: ['integrations'] });
      const busyAdmin = await makeUser(h, busy.id, { role: 'COMPANY_IT_ADMIN' });
      const busySession = await signIn(h, busyAdmin);
      const person = `resent.${Date.now()}@example.com`;
      const made = await h.request('POST', '/api/v1/company/users', {
        session: busySession,
        body: { email: person, role: 'MEMBER' },
      });
      assert.equal(made.status, 201, `the invitation answered ${made.status}: ${made.text}`);
      for (let i = 0; i < 2; i++) {
        const r = await h.request('POST', `/api/v1/company/users/${made.body.id}/invitation`, {
          session: busySession,
        });
        assert.equal(r.status, 201, `new link ${i + 1} answered ${r.status}: ${r.text}`);
      }

      const tp = await newPage(browser);
      const other = await newPage(browser);
      try {
        const { page } = tp;
        page.setDefaultTimeout(WAIT_MS);
        await signInThroughUi(page, h.uiUrl, fullAdmin, '/people');
        await page.getByRole('button', { name: 'Invite someone' }).click();
        const dialog = page.getByRole('dialog', { name: 'Invite someone' });
        await dialog.getByLabel('E-mail address').fill(`one.more.${Date.now()}@example.com`);
        await dialog.getByRole('button', { name: 'Invite', exact: true }).click();
        await visible(dialog.getByRole('alert').filter({ hasText: '100 pending invitations' }));
        assert.equal(
          await dialog.getByText('already has a hubgate account').count(),
          0,
          'the cap is shown as a taken address',
        );
        assertNoPageErrors(tp, 'people at 100 pending invitations');

        other.page.setDefaultTimeout(WAIT_MS);
        await signInThroughUi(other.page, h.uiUrl, busyAdmin, '/people');
        await other.page.getByRole('button', { name: `New link for ${person}` }).click();
        await other.page.getByRole('button', { name: 'Make a new link' }).click();
        await visible(
          other.page.getByText(
            /Too many invitation links were made within the hour; try again in 60 minutes\./,
          ),
        );
        assertNoPageErrors(other, 'people after 3 links for one person');
      } finally {
        await tp.context.close();
        await other.context.close();
      }
    },
  );
});
