import { useState } from 'preact/hooks';
import type { PasswordSignInState } from '../api-types.js';
import { api } from '../api.js';
import { useResource } from '../hooks.js';
import { listPasskeys, passkeysSupported, PASSWORD_SIGN_IN } from '../passkeys.js';
import { PasskeyDialogs, type PasskeyDialog } from './PasskeyDialogs.js';
import { PasskeyListBody } from './PasskeyListBody.js';
import { PasskeysCard } from './PasskeysCard.js';
import { PasswordSignInCard } from './PasswordSignInCard.js';
import { useDoneNotice } from './useDoneNotice.js';

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
  const [open, setOpen] = useState<PasskeyDialog>(null);
  // After an addition or a removal the news takes the focus: the button that opened the dialog
  // may be gone (a removed passkey's). A dialog cancelled gives it back to its button.
  const { done, setDone, ref: doneNotice } = useDoneNotice();

  const list = passkeys.data;
  const enabled = passwordEnabled ?? password.data?.enabled;
  const openDialog = (next: PasskeyDialog) => {
    setDone(null);
    setOpen(next);
  };
  return (
    <>
      <PasskeysCard
        supported={supported}
        onAdd={() => openDialog({ kind: 'add' })}
        done={done}
        doneNotice={doneNotice}
      >
        <PasskeyListBody
          passkeys={passkeys}
          onRemove={(passkey) => openDialog({ kind: 'remove', passkey })}
        />
      </PasskeysCard>
      <PasswordSignInCard
        error={password.error}
        enabled={enabled}
        passkeyCount={list?.length}
        onChanged={(state) => setPasswordEnabled(state.enabled)}
      />
      <PasskeyDialogs
        open={open}
        lastWithoutPassword={enabled === false && list?.length === 1}
        onChanged={passkeys.reload}
        onDone={setDone}
        onClose={() => setOpen(null)}
      />
    </>
  );
}
