import type { ComponentChildren, Ref } from 'preact';
import { DoneNotice } from './DoneNotice.js';

/** The passkeys card: its Add button (off where the browser cannot), what passkeys are, the news, the list. */
export function PasskeysCard({
  supported,
  onAdd,
  done,
  doneNotice,
  children,
}: {
  supported: boolean;
  onAdd: () => void;
  done: string | null;
  doneNotice: Ref<HTMLDivElement>;
  children: ComponentChildren;
}) {
  return (
    <section class="card" aria-labelledby="passkeys-title">
      <div class="card-head">
        <h2 id="passkeys-title">Passkeys</h2>
        <button
          type="button"
          class="button button-primary"
          disabled={!supported}
          aria-describedby={supported ? undefined : 'passkeys-unsupported'}
          onClick={onAdd}
        >
          Add a passkey
        </button>
      </div>
      <p class="passkey-intro">
        A passkey signs you in with your fingerprint, face, screen lock or security key instead of a password.
        It works only on hubgate, so it cannot be phished or leaked.
      </p>
      {supported ? null : (
        <p class="field-hint" id="passkeys-unsupported">
          This browser cannot create passkeys. Use one that supports them to add a passkey.
        </p>
      )}
      <DoneNotice message={done} noticeRef={doneNotice} extraClass="passkey-done" />
      {children}
    </section>
  );
}
