// The password sign-in switch (docs/api/passkeys.md): off, the account signs in with a passkey only (asked
// first, in a dialog); it cannot be turned off without a passkey.
import { useId, useState } from 'preact/hooks';
import { api, ApiError } from '../common/api.js';
import { ConfirmDialog } from '../common/Dialog.js';
import { useAction } from '../common/hooks.js';
import { ErrorNotice, Loading, Notice } from '../common/Notice.js';
import { routes, type PasswordSignInState } from '../common/routes.js';

/** Turning password sign-in on or off: what was asked while the server answers, and what it said. */
function usePasswordSwitch(onChanged: (state: PasswordSignInState) => void) {
  const [said, setSaid] = useState<string | null>(null);
  // What the person asked for shows while the server answers; a refusal shows the old state again.
  const [asked, setAsked] = useState<boolean | null>(null);
  const change = useAction(async (next: boolean) => {
    setSaid(null);
    setAsked(next);
    try {
      const state = await api(routes.passkeys.setPasswordSignIn, { body: { enabled: next } });
      onChanged(state);
      setSaid(
        state.enabled
          ? 'Password sign-in is on: your e-mail address and password work again.'
          : 'Password sign-in is off: sign in with a passkey from now on.',
      );
    } catch (error) {
      if (error instanceof ApiError && error.code === 'conflict') {
        throw error.saying(
          'Password sign-in stays on: add a passkey first, or you could not sign in at all.',
        );
      }
      throw error;
    } finally {
      setAsked(null);
    }
  });
  return { said, asked, change };
}

/**
 * "Turn off password sign-in?": what off means, asked before it happens. Closing the dialog gives
 * the focus back to the switch.
 */
function PasswordOffDialog({
  passkeyCount,
  onConfirm,
  onClose,
}: {
  passkeyCount: number;
  onConfirm: () => void;
  onClose: () => void;
}) {
  return (
    <ConfirmDialog
      title="Turn off password sign-in?"
      confirmLabel="Turn off password sign-in"
      onConfirm={onConfirm}
      onClose={onClose}
    >
      <p>
        From now on this account signs in only with{' '}
        {passkeyCount === 1 ? 'its passkey' : `one of its ${passkeyCount} passkeys`}: a correct password is
        refused, and your other sessions that signed in with a password end now.
      </p>
      <p>Keep a passkey you can reach. You can turn password sign-in back on here at any time.</p>
    </ConfirmDialog>
  );
}

/**
 * The password sign-in switch (docs/api/passkeys.md): off, the account signs in with a passkey only; it
 * asks first. It cannot be turned off without a passkey (the server answers 409); it can always go
 * back on.
 */
function PasskeyPasswordSwitch({
  enabled,
  passkeyCount,
  onChanged,
}: {
  enabled: boolean;
  passkeyCount: number;
  onChanged: (state: PasswordSignInState) => void;
}) {
  const hintId = useId();
  const reasonId = useId();
  const { said, asked, change } = usePasswordSwitch(onChanged);
  const [confirming, setConfirming] = useState(false);
  const blocked = enabled && passkeyCount === 0;
  return (
    <section class="card" aria-labelledby="password-sign-in-title">
      <h2 id="password-sign-in-title">Password sign-in</h2>
      <label class="check passkey-switch">
        <input
          type="checkbox"
          role="switch"
          checked={asked ?? enabled}
          // Not disabled while saving: a disabled control loses the keyboard focus. A click then
          // changes nothing instead.
          disabled={blocked}
          aria-busy={change.busy}
          aria-describedby={blocked ? `${hintId} ${reasonId}` : hintId}
          onClick={(event) => {
            if (change.busy) event.preventDefault();
          }}
          onChange={(event) => {
            const next = event.currentTarget.checked;
            // Off is asked first; the switch shows on until the person confirms.
            if (next) void change.run(true);
            else {
              event.currentTarget.checked = true;
              setConfirming(true);
            }
          }}
        />
        <span>Allow sign-in with a password</span>
      </label>
      <p class="field-hint passkey-switch-hint" id={hintId}>
        When off, this account signs in only with a passkey; a correct password is refused.
      </p>
      {blocked ? (
        <p class="field-hint passkey-switch-hint" id={reasonId}>
          <strong>Add a passkey first</strong>: with password sign-in off, a passkey is the only way in.
        </p>
      ) : null}
      <div class="passkey-switch-news">
        <ErrorNotice error={change.error} />
        {said ? <Notice tone="success">{said}</Notice> : null}
      </div>
      {confirming ? (
        <PasswordOffDialog
          passkeyCount={passkeyCount}
          onClose={() => setConfirming(false)}
          onConfirm={() => {
            setConfirming(false);
            void change.run(false);
          }}
        />
      ) : null}
    </section>
  );
}

/** The password sign-in card: its switch once both it and the passkeys are loaded. */
export function PasswordSignInCard({
  error,
  enabled,
  passkeyCount,
  onChanged,
}: {
  error: ApiError | undefined;
  enabled: boolean | undefined;
  /** Undefined while the passkeys load. */
  passkeyCount: number | undefined;
  onChanged: (state: PasswordSignInState) => void;
}) {
  if (error) {
    return (
      <section class="card" aria-labelledby="password-sign-in-title">
        <h2 id="password-sign-in-title">Password sign-in</h2>
        <ErrorNotice error={error} title="Whether password sign-in is on could not be loaded." />
      </section>
    );
  }
  if (enabled === undefined || passkeyCount === undefined) {
    return (
      <section class="card" aria-labelledby="password-sign-in-title">
        <h2 id="password-sign-in-title">Password sign-in</h2>
        <Loading what="Loading" />
      </section>
    );
  }
  return <PasskeyPasswordSwitch enabled={enabled} passkeyCount={passkeyCount} onChanged={onChanged} />;
}
