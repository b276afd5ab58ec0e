import type { Passkey } from '../api-types.js';
import { PasskeyAddDialog } from './PasskeyAddDialog.js';
import { PasskeyRemoveDialog } from './PasskeyRemoveDialog.js';

/** A dialog the passkeys card opens: add a passkey, or remove one. */
export type PasskeyDialog = { kind: 'add' } | { kind: 'remove'; passkey: Passkey } | null;

/** The dialog open over the profile's passkeys, if any. */
export function PasskeyDialogs({
  open,
  lastWithoutPassword,
  onChanged,
  onDone,
  onClose,
}: {
  open: PasskeyDialog;
  /** Removing this passkey would leave no way in: password sign-in is off and it is the only one. */
  lastWithoutPassword: boolean;
  /** The list is out of date. */
  onChanged: () => void;
  /** What happened, for the card to say. */
  onDone: (message: string) => void;
  onClose: () => void;
}) {
  return (
    <>
      {open?.kind === 'add' ? (
        <PasskeyAddDialog
          onClose={onClose}
          onAdded={(passkey) => {
            onDone(`“${passkey.name}” is added: you can sign in with it from now on.`);
            onChanged();
          }}
        />
      ) : null}
      {open?.kind === 'remove' ? (
        <PasskeyRemoveDialog
          passkey={open.passkey}
          lastWithoutPassword={lastWithoutPassword}
          onClose={onClose}
          onRemoved={() => {
            onDone(`“${open.passkey.name}” is removed: hubgate refuses it from now on.`);
            onChanged();
          }}
        />
      ) : null}
    </>
  );
}
