import type { Passkey } from '../api-types.js';
import type { Resource } from '../hooks.js';
import { Loading } from './Loading.js';
import { ErrorNotice } from './Notice.js';
import { PasskeyList } from './PasskeyList.js';

/** The person's passkeys: failed, loading, none yet, or the list with a remove button each. */
export function PasskeyListBody({
  passkeys,
  onRemove,
}: {
  passkeys: Resource<Passkey[]>;
  onRemove: (passkey: Passkey) => void;
}) {
  const list = passkeys.data;
  if (passkeys.error)
    return <ErrorNotice error={passkeys.error} title="Your passkeys could not be loaded." />;
  if (!list) return <Loading what="Loading your passkeys" />;
  if (list.length === 0) {
    return (
      <p class="passkey-none">
        You have no passkey yet. Add one to sign in without typing a password, on this device or any device
        your password manager syncs to.
      </p>
    );
  }
  return <PasskeyList passkeys={list} onRemove={onRemove} />;
}
