import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
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
  type UiHarness,
} from '../helpers/browser.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

// Passkeys in the web UI (docs/api/passkeys.md, docs/operators/web-ui.md), with Chromium's virtual authenticator standing in for
// the person's fingerprint reader: added on the profile, used on the sign-in page (the button and
// autofill), refused when forged or removed, and the password sign-in switch. Skipped test by test
// when Chromium is missing.
const skip = browserSkipReason();

// Every `navigator.credentials.get()` the page makes, with how it ended and how many others were
// still pending when it began: the page may never have two at once. An init script (evaluated
// through the DevTools protocol, which the page's CSP does not govern) and plain text, so that the
// test's compiler adds nothing the page does not have.
const RECORD_GETS = `(() => {
  const calls = [];
  window.__credentialGets = calls;
  const container = navigator.credentials;
  const get = container.get.bind(container);
  container.get = (options) => {
    const call = {
      mediation: (options && options.mediation) || 'optional',
      state: 'pending',
      othersPending: calls.filter((c) => c.state === 'pending').length,
    };
    calls.push(call);
    return get(options).then(
      (credential) => { call.state = 'resolved'; return credential; },
      (error) => { call.state = 'rejected: ' + error.name; throw error; },
    );
  };
})();`;

interface CredentialGet {
  mediation: string;
  state: string;
  othersPending: number;
}

const credentialGets = async (page: Page, from = 0) =>
  ((await page.evaluate('window.__credentialGets.slice()')) as CredentialGet[]).slice(from);
/** How many requests the page has made so far: `credentialGets(page, mark)` lists those after. */
const markCredentialGets = async (page: Page) => (await credentialGets(page)).length;

/**
 * A platform authenticator (a fingerprint reader, a phone) through the DevTools protocol. With
 * presence simulated it answers every ceremony at once, as if the person touched it; without, it
 * keeps every request waiting. It answers a conditional request (autofill) at once too, as if the
 * person had chosen the e-mail field's suggestion.
 */
async function virtualAuthenticator(page: Page, options: { synced?: boolean } = {}) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
      defaultBackupEligibility: Boolean(options.synced),
      defaultBackupState: Boolean(options.synced),
    },
  });
  const credentials = async () =>
    (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;
  return {
    credentials,
    /** Puts back a credential read from this or another virtual authenticator. */
    restore: (credential: Awaited<ReturnType<typeof credentials>>[number]) =>
      cdp.send('WebAuthn.addCredential', { authenticatorId, credential }),
    presence: (enabled: boolean) =>
      cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled }),
    forgeSignatures: (isBogusSignature: boolean) =>
      cdp.send('WebAuthn.setResponseOverrideBits', { authenticatorId, isBogusSignature }),
    remove: async () => {
      await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId });
      await cdp.detach();
    },
  };
}
type VirtualAuthenticator = Awaited<ReturnType<typeof virtualAuthenticator>>;

const passkeyItem = (page: Page, name: string) =>
  page.getByRole('list', { name: 'Your passkeys' }).getByRole('listitem').filter({ hasText: name });

/** "Add a passkey" on the profile, by keyboard where a person would type: the name, then Enter. */
async function addPasskey(page: Page, name: string): Promise<void> {
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add a passkey' });
  await visible(dialog);
  const field = dialog.getByRole('textbox', { name: 'Name (optional)' });
  await eventually(async () => assert.equal(await hasFocus(field), true, 'the name field has no focus'));
  if (name) await page.keyboard.type(name);
  await page.keyboard.press('Enter');
  await gone(dialog);
}

async function signOut(page: Page): Promise<void> {
  await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
  await visible(page.getByRole('heading', { level: 1, name: 'Sign in' }));
  await visible(page.getByText('You have signed out.'));
}

/** What the profile says about this session's way in. */
async function signedInWith(page: Page, uiUrl: string): Promise<string> {
  await page.goto(`${uiUrl}/profile`);
  const method = page.locator('dt', { hasText: 'Signed in with' }).locator('+ dd');
  await visible(method);
  return (await method.textContent()) ?? '';
}

/** Waits until the page's autofill request is the one pending `credentials.get()`. */
async function autofillWaiting(page: Page): Promise<void> {
  await eventually(async () => {
    const gets = await credentialGets(page);
    assert.deepEqual(
      gets.filter((g) => g.state === 'pending').map((g) => g.mediation),
      ['conditional'],
      `autofill is not waiting: ${JSON.stringify(gets)}`,
    );
  });
}

describe('passkeys in the web UI', () => {
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
    'passkeys are added on the profile, and sign in through the button while autofill waits, and through autofill',
    { skip, timeout: 300_000 },
    async () => {
      const tenant = await makeTenant(h, { entitlements: ['integrations'] });
      const user = await makeUser(h, tenant.id, { role: 'MEMBER' });
      const tp = await newPage(browser);
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      await page.addInitScript(RECORD_GETS);
      let laptop: VirtualAuthenticator | undefined = await virtualAuthenticator(page);
      try {
        await signInThroughUi(page, h.uiUrl, user, '/profile');
        await visible(page.getByRole('heading', { level: 2, name: 'Passkeys' }));
        await visible(page.getByText('You have no passkey yet.'));
        // No passkey: passwords cannot be turned off, and the page says why.
        const passwords = page.getByRole('switch', {
          name: 'Allow sign-in with a password',
        });
        await visible(passwords);
        assert.equal(
          await passwords.isChecked(),
          true,
          'password sign-in shows as off for a user with no passkey',
        );
        assert.equal(
          await passwords.isDisabled(),
          true,
          'password sign-in can be turned off without a passkey',
        );
        await visible(page.getByText('with password sign-in off, a passkey is the only way in'));
        await screenshot(page, 'profile-passkeys-none');
        await assertNoSeriousViolations(page, 'profile without passkeys');

        // The first passkey, named; the dialog, photographed while it asks.
        await page.getByRole('button', { name: 'Add a passkey' }).click();
        let dialog = page.getByRole('dialog', { name: 'Add a passkey' });
        await visible(dialog);
        await dialog.getByRole('textbox', { name: 'Name (optional)' }).fill('Work laptop');
        await screenshot(page, 'profile-passkey-add');
        await assertNoSeriousViolations(page, 'add a passkey dialog');
        await dialog.getByRole('button', { name: 'Create passkey' }).click();
        await gone(dialog);
        await visible(page.getByText('“Work laptop” is added: you can sign in with it from now on.'));
        const first = passkeyItem(page, 'Work laptop');
        await visible(first);
        await visible(first.getByText('Device-bound', { exact: true }));
        await visible(first.getByText('last used never'));
        assert.equal(
          (await laptop.credentials()).length,
          1,
          'the authenticator does not hold exactly the passkey added',
        );
        assert.equal(await passwords.isDisabled(), false, 'a passkey now lets passwords be turned off');

        // The same authenticator again: the browser refuses (excludeCredentials), said in words.
        await page.getByRole('button', { name: 'Add a passkey' }).click();
        dialog = page.getByRole('dialog', { name: 'Add a passkey' });
        await dialog.getByRole('button', { name: 'Create passkey' }).click();
        await visible(
          dialog.getByRole('alert').filter({ hasText: 'already holds one of your hubgate passkeys' }),
        );
        await dialog.getByRole('button', { name: 'Cancel' }).click();
        await gone(dialog);

        // A second one, from a password manager that syncs, without a name: the server names it.
        const saved = (await laptop.credentials())[0];
        assert.ok(saved, "the laptop's credential could not be saved for later");
        await laptop.remove();
        laptop = undefined;
        const phone = await virtualAuthenticator(page, { synced: true });
        await addPasskey(page, '');
        await visible(page.getByText(/is added: you can sign in with it from now on/));
        const items = page.getByRole('list', { name: 'Your passkeys' }).getByRole('listitem');
        await eventually(async () =>
          assert.equal(await items.count(), 2, 'the second passkey is not listed next to the first'),
        );
        // Newest first.
        await visible(items.first().getByText('Synced', { exact: true }));
        await visible(items.nth(1).getByRole('button', { name: 'Remove Work laptop' }));
        await screenshot(page, 'profile-passkeys');
        await assertNoSeriousViolations(page, 'profile with passkeys');

        // A phone's width: nothing wider than the screen.
        await page.setViewportSize({ width: 375, height: 800 });
        await eventually(async () =>
          assert.ok(
            ((await page.evaluate('document.documentElement.scrollWidth')) as number) <= 375,
            'the profile is wider than a 375 px screen',
          ),
        );
        await screenshot(page, 'profile-passkeys-phone');
        await page.setViewportSize({ width: 1280, height: 800 });

        // Back to the laptop (the only authenticator from here on).
        await phone.remove();
        laptop = await virtualAuthenticator(page);
        await laptop.restore(saved);

        // Signed out, with the laptop not touched yet: autofill waits on the e-mail field.
        await laptop.presence(false);
        await signOut(page);
        const email = page.getByRole('textbox', { name: 'E-mail address' });
        assert.equal(
          await email.getAttribute('autocomplete'),
          'username webauthn',
          'the e-mail field does not offer passkey autofill',
        );
        await autofillWaiting(page);
        await screenshot(page, 'sign-in-passkey');
        await assertNoSeriousViolations(page, 'sign-in with passkeys');

        // The button aborts autofill before its own ceremony: never two requests at once.
        const waiting = (await markCredentialGets(page)) - 1;
        await laptop.presence(true);
        await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
        await page.waitForURL((url) => url.pathname === '/');
        await visible(page.getByRole('heading', { level: 1, name: 'Overview' }));
        assert.deepEqual(
          await credentialGets(page, waiting),
          [
            { mediation: 'conditional', state: 'rejected: AbortError', othersPending: 0 },
            { mediation: 'optional', state: 'resolved', othersPending: 0 },
          ],
          'the button did not abort autofill before its own request, or two requests overlapped',
        );
        assert.equal(
          await signedInWith(page, h.uiUrl),
          'A passkey',
          'the profile does not say the session began with a passkey',
        );
        await visible(passkeyItem(page, 'Work laptop').getByText(/last used (now|\d+ seconds? ago)/));

        // Signed out with the laptop ready: autofill signs in by itself (the suggestion chosen),
        // through the sign-in page, too quickly to read it.
        const signedOut = await markCredentialGets(page);
        await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
        await page.waitForURL((url) => url.pathname === '/sign-in');
        await page.waitForURL((url) => url.pathname === '/');
        await visible(page.getByRole('heading', { level: 1, name: 'Overview' }));
        assert.deepEqual(
          await credentialGets(page, signedOut),
          [{ mediation: 'conditional', state: 'resolved', othersPending: 0 }],
          'autofill did not sign in by itself after sign-out',
        );
        assert.equal(
          await signedInWith(page, h.uiUrl),
          'A passkey',
          'the profile does not say the session began with a passkey',
        );
        assertNoPageErrors(tp, 'passkeys: add and sign in');
      } finally {
        await tp.close();
      }
    },
  );

  test(
    'password sign-in off refuses the right password; forged and removed passkeys are refused in words',
    { skip, timeout: 300_000 },
    async () => {
      const tenant = await makeTenant(h, { entitlements: ['integrations'] });
      const user = await makeUser(h, tenant.id, { role: 'COMPANY_IT_ADMIN' });
      const tp = await newPage(browser, { colorScheme: 'dark' });
      const { page } = tp;
      page.setDefaultTimeout(WAIT_MS);
      await page.addInitScript(RECORD_GETS);
      const laptop = await virtualAuthenticator(page);
      try {
        await signInThroughUi(page, h.uiUrl, user, '/profile');
        await visible(page.getByText('You have no passkey yet.'));
        await addPasskey(page, 'Laptop');
        await visible(passkeyItem(page, 'Laptop'));
        const [credential] = await laptop.credentials();
        assert.ok(credential, 'the authenticator holds no credential after adding a passkey');

        // Passwords off, by keyboard.
        const passwords = page.getByRole('switch', {
          name: 'Allow sign-in with a password',
        });
        await passwords.focus();
        await page.keyboard.press('Space');
        // Off is asked first, saying what it means; the switch stays on until it is confirmed.
        const off = page.getByRole('dialog', { name: 'Turn off password sign-in?' });
        await visible(off);
        await visible(off.getByText(/signs in only with its passkey: a correct password is refused/));
        assert.equal(
          await passwords.isChecked(),
          true,
          'the switch shows password sign-in off before the person confirmed',
        );
        await screenshot(page, 'profile-password-off-confirm');
        await assertNoSeriousViolations(page, 'turning password sign-in off');
        // Escape keeps passwords on and gives the focus back to the switch; asked again, confirmed.
        await page.keyboard.press('Escape');
        await gone(off);
        assert.equal(await passwords.isChecked(), true, 'Escape turned password sign-in off');
        // The dialog gives the focus back as it closes, which may land a moment after it is gone.
        await eventually(async () =>
          assert.equal(await hasFocus(passwords), true, 'the switch did not get the focus back after Escape'),
        );
        await page.keyboard.press('Space');
        await visible(off);
        await off.getByRole('button', { name: 'Turn off password sign-in' }).press('Enter');
        await gone(off);
        await visible(page.getByText('Password sign-in is off: sign in with a passkey from now on.'));
        assert.equal(
          await passwords.isChecked(),
          false,
          'the switch still shows password sign-in on after turning it off',
        );
        assert.equal(await hasFocus(passwords), true, 'the switch lost the focus');

        // The only passkey cannot go now: the confirmation says so, and so does the refusal.
        await page.getByRole('button', { name: 'Remove Laptop' }).click();
        let dialog = page.getByRole('dialog', { name: 'Remove “Laptop”?' });
        await visible(dialog);
        await visible(dialog.getByText('This is your only passkey and password sign-in is off'));
        await screenshot(page, 'profile-passkey-remove-last');
        await assertNoSeriousViolations(page, 'remove the last passkey');
        await dialog.getByRole('button', { name: 'Remove passkey' }).click();
        await visible(
          dialog.getByRole('alert').filter({ hasText: 'hubgate kept “Laptop”: it is your last passkey' }),
        );
        await dialog.getByRole('button', { name: 'Cancel' }).click();
        await gone(dialog);
        await visible(passkeyItem(page, 'Laptop'));

        // Signed out; the right password is refused, in words (autofill kept waiting meanwhile).
        await laptop.presence(false);
        await signOut(page);
        await autofillWaiting(page);
        await page.getByRole('textbox', { name: 'E-mail address' }).fill(user.email);
        await page.getByLabel('Password', { exact: true }).fill(user.password);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await visible(
          page.getByRole('alert').filter({
            hasText: 'Password sign-in is turned off for this account. Sign in with a passkey instead.',
          }),
        );
        await autofillWaiting(page);

        // A forged signature: refused, said in words; autofill starts again for another try.
        await laptop.forgeSignatures(true);
        await laptop.presence(true);
        const waiting = (await markCredentialGets(page)) - 1;
        await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
        const refused = page.getByRole('alert').filter({ hasText: 'hubgate did not accept that passkey' });
        await visible(refused);
        await screenshot(page, 'sign-in-passkey-refused');
        await assertNoSeriousViolations(page, 'sign-in, passkey refused');
        assert.equal(new URL(page.url()).pathname, '/sign-in', 'a forged passkey signs in');
        await eventually(async () => {
          const gets = await credentialGets(page, waiting);
          assert.deepEqual(
            gets.slice(0, 2),
            [
              { mediation: 'conditional', state: 'rejected: AbortError', othersPending: 0 },
              { mediation: 'optional', state: 'resolved', othersPending: 0 },
            ],
            'the button did not abort autofill before its own request',
          );
          assert.ok(
            gets.slice(2).some((g) => g.mediation === 'conditional'),
            `autofill did not start again: ${JSON.stringify(gets)}`,
          );
          assert.ok(
            gets.every((g) => g.othersPending === 0),
            JSON.stringify(gets),
          );
        });
        // A refusal of a fresh challenge is signalled as an unknown credential (docs/web-ui.md):
        // the authenticator forgets the passkey whose signature does not match hubgate's key.
        await eventually(async () =>
          assert.equal(
            (await laptop.credentials()).length,
            0,
            'the authenticator was not told to forget the refused passkey',
          ),
        );

        // The genuine passkey back: it signs in.
        await laptop.forgeSignatures(false);
        await laptop.restore(credential);
        await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
        await page.waitForURL((url) => url.pathname === '/');
        assert.equal(await signedInWith(page, h.uiUrl), 'A passkey', 'the genuine passkey does not sign in');

        // Passwords on again, then the passkey removed through its confirmation.
        await page.getByRole('switch', { name: 'Allow sign-in with a password' }).check();
        await visible(page.getByText('Password sign-in is on: your e-mail address and password work again.'));
        await page.getByRole('button', { name: 'Remove Laptop' }).click();
        dialog = page.getByRole('dialog', { name: 'Remove “Laptop”?' });
        await visible(dialog.getByText('hubgate refuses this passkey from now on.'));
        assert.equal(
          await dialog.getByText('This is your only passkey').count(),
          0,
          'with passwords on again, removing the only passkey still warns that it is the only way in',
        );
        await screenshot(page, 'profile-passkey-remove');
        await assertNoSeriousViolations(page, 'remove a passkey');
        await dialog.getByRole('button', { name: 'Remove passkey' }).click();
        await gone(dialog);
        await visible(page.getByText('“Laptop” is removed: hubgate refuses it from now on.'));
        await visible(page.getByText('You have no passkey yet.'));
        // The button that opened the confirmation is gone; the focus is on the news, not lost.
        await eventually(async () =>
          assert.equal(
            await page.evaluate('document.activeElement === document.body'),
            false,
            'the focus was lost to the page body after removing the passkey',
          ),
        );

        // The page tells the authenticators which passkeys still work here (none now), and this
        // one forgets the removed passkey (signalAllAcceptedCredentials).
        await eventually(async () =>
          assert.equal(
            (await laptop.credentials()).length,
            0,
            'the authenticator was not told the removed passkey no longer works',
          ),
        );

        // An authenticator that missed that signal (another browser) still offers it: signing in
        // with it is refused, and the browser is told the credential is unknown, so it stops.
        await laptop.restore(credential);
        await laptop.presence(false);
        await signOut(page);
        await autofillWaiting(page);
        await laptop.presence(true);
        assert.equal(
          (await laptop.credentials()).length,
          1,
          'the removed passkey could not be restored on the authenticator',
        );
        await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
        await visible(page.getByRole('alert').filter({ hasText: 'hubgate did not accept that passkey' }));
        await eventually(async () =>
          assert.equal(
            (await laptop.credentials()).length,
            0,
            'the authenticator was not told the removed passkey is unknown',
          ),
        );

        // And the password works again.
        await signInThroughUi(page, h.uiUrl, user, '/profile');
        assert.equal(
          await signedInWith(page, h.uiUrl),
          'E-mail and password',
          'the password sign-in does not say it was a password',
        );
        assertNoPageErrors(tp, 'passkeys: refusals and removal');
      } finally {
        await tp.close();
      }
    },
  );
});
