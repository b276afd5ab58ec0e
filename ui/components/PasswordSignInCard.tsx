import type { PasswordSignInState } from '../api-types.js';
import type { ApiError } from '../api.js';
import { Loading } from './Loading.js';
import { ErrorNotice } from './Notice.js';
import { PasskeyPasswordSwitch } from './PasskeyPasswordSwitch.js';

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
