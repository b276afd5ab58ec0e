import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import type { Passkey, PasswordSignInState } from '../api-types.js';
import { useResource } from '../hooks.js';
import { listPasskeys, PASSWORD_SIGN_IN, passkeysSupported } from '../passkeys.js';
import { Loading } from './Loading.js';
import { ErrorNotice, Notice } from './Notice.js';
import { PasskeyAddDialog } from './PasskeyAddDialog.js';
import { PasskeyList } from './PasskeyList.js';
import { PasskeyPasswordSwitch } from './PasskeyPasswordSwitch.js';
import { PasskeyRemoveDialog } from './PasskeyRemoveDialog.js';

type Open = { kind: 'add' } | { kind: 'remove'; passkey: Passkey } | null;

/** The profile's passkeys (add, remove) and the password sign-in switch (contract §10, §12). */
export function PasskeySection() {
  const supported = passkeysSupported();
  const passkeys = useResource((signal) => listPasskeys(signal), 'passkeys');
  const password = useResource(
    (signal) => api<PasswordSignInState>('GET', PASSWORD_SIGN_IN, { signal }),
    'password-sign-in',
  );
  // The switch's answer is the news until the next load.
  const [passwordEnabled, setPasswordEnabled] = useState<boolean | null>(null);
  const [open, setOpen] = useState<Open>(null);
  const [done, setDone] = useState<string | null>(null);
  const doneNotice = useRef<HTMLDivElement>(null);

  // After an addition or a removal the news takes the focus: the button that opened the dialog
  // may be gone (a removed passkey's). A dialog cancelled gives it back to its button.
  useEffect(() => {
    if (done) doneNotice.current?.focus();
  }, [done]);

  const list = passkeys.data;
  const enabled = passwordEnabled ?? password.data?.enabled;
  const close = () => setOpen(null);

  let body;
  if (passkeys.error)
    body = <ErrorNotice error={passkeys.error} title="Your passkeys could not be loaded." />;
  else if (!list) body = <Loading what="Loading your passkeys" />;
  else if (list.length === 0) {
    body = (
      <p class="passkey-none">
        You have no passkey yet. Add one to sign in without typing a password, on this device or any device
        your password manager syncs to.
      </p>
    );
  } else {
    body = (
      <PasskeyList
        passkeys={list}
        onRemove={(passkey) => {
          setDone(null);
          setOpen({ kind: 'remove', passkey });
        }}
      />
    );
  }

  return (
    <>
      <section class="card" aria-labelledby="passkeys-title">
        <div class="card-head">
          <h2 id="passkeys-title">Passkeys</h2>
          <button
            type="button"
            class="button button-primary"
            disabled={!supported}
            aria-describedby={supported ? undefined : 'passkeys-unsupported'}
            onClick={() => {
              setDone(null);
              setOpen({ kind: 'add' });
            }}
          >
            Add a passkey
          </button>
        </div>
        <p class="passkey-intro">
          A passkey signs you in with your fingerprint, face, screen lock or security key instead of a
          password. It works only on hubgate, so it cannot be phished or leaked.
        </p>
        {supported ? null : (
          <p class="field-hint" id="passkeys-unsupported">
            This browser cannot create passkeys. Use one that supports them to add a passkey.
          </p>
        )}
        {done ? (
          <div ref={doneNotice} tabIndex={-1} class="focus-target passkey-done">
            <Notice tone="success">{done}</Notice>
          </div>
        ) : null}
        {body}
      </section>
      {password.error ? (
        <section class="card" aria-labelledby="password-sign-in-title">
          <h2 id="password-sign-in-title">Password sign-in</h2>
          <ErrorNotice error={password.error} title="Whether password sign-in is on could not be loaded." />
        </section>
      ) : enabled === undefined || !list ? (
        <section class="card" aria-labelledby="password-sign-in-title">
          <h2 id="password-sign-in-title">Password sign-in</h2>
          <Loading what="Loading" />
        </section>
      ) : (
        <PasskeyPasswordSwitch
          enabled={enabled}
          passkeyCount={list.length}
          onChanged={(state) => setPasswordEnabled(state.enabled)}
        />
      )}
      {open?.kind === 'add' ? (
        <PasskeyAddDialog
          onClose={close}
          onAdded={(passkey) => {
            setDone(`“${passkey.name}” is added: you can sign in with it from now on.`);
            passkeys.reload();
          }}
        />
      ) : null}
      {open?.kind === 'remove' ? (
        <PasskeyRemoveDialog
          passkey={open.passkey}
          lastWithoutPassword={enabled === false && list?.length === 1}
          onClose={close}
          onRemoved={() => {
            setDone(`“${open.passkey.name}” is removed: hubgate refuses it from now on.`);
            passkeys.reload();
          }}
        />
      ) : null}
    </>
  );
}
