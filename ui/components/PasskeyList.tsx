import type { Passkey } from '../api-types.js';
import { PasskeyIcon } from './PasskeyIcon.js';
import { Time } from './Time.js';

/** Where a passkey lives, from the flags its authenticator reported (contract §10). */
function kindOf(passkey: Passkey): { label: string; tone: string } {
  if (passkey.backedUp) return { label: 'Synced', tone: 'badge badge-good' };
  if (!passkey.backupEligible) return { label: 'Device-bound', tone: 'badge' };
  return { label: 'Can sync', tone: 'badge' };
}

/** The signed-in person's passkeys, newest first, each with its "Remove". */
export function PasskeyList({
  passkeys,
  onRemove,
}: {
  passkeys: Passkey[];
  onRemove: (passkey: Passkey) => void;
}) {
  return (
    <>
      <ul class="passkey-list" aria-label="Your passkeys">
        {passkeys.map((passkey) => {
          const kind = kindOf(passkey);
          return (
            <li key={passkey.id} class="passkey">
              <span class="passkey-mark" aria-hidden="true">
                <PasskeyIcon size={20} />
              </span>
              <div class="passkey-text">
                <p class="passkey-title">
                  <span class="passkey-name">{passkey.name}</span>
                  <span class={kind.tone}>{kind.label}</span>
                </p>
                <p class="passkey-meta">
                  Added <Time at={passkey.createdAt} />,{' '}
                  <span class="passkey-used">
                    last used {passkey.lastUsedAt ? <Time at={passkey.lastUsedAt} /> : 'never'}
                  </span>
                </p>
              </div>
              <button
                type="button"
                class="button button-small button-danger-quiet"
                onClick={() => onRemove(passkey)}
              >
                Remove<span class="visually-hidden"> {passkey.name}</span>
              </button>
            </li>
          );
        })}
      </ul>
      <p class="passkey-legend">
        <strong>Synced</strong>: your password manager keeps it on your other devices too.{' '}
        <strong>Can sync</strong>: it may be copied to them later. <strong>Device-bound</strong>: it never
        leaves the one device or security key it was made on.
      </p>
    </>
  );
}
