import { useId } from 'preact/hooks';
import type { PasswordSignInState } from '../api-types.js';
import { ErrorNotice, Notice } from './Notice.js';
import { usePasswordSwitch } from './usePasswordSwitch.js';

/**
 * The password sign-in switch (contract §10): off, the account signs in with a passkey only.
 * It cannot be turned off without a passkey (the server answers 409); it can always go back on.
 */
export function PasskeyPasswordSwitch({
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
          onChange={(event) => void change.run(event.currentTarget.checked)}
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
    </section>
  );
}
