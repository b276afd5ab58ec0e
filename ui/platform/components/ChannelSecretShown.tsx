import type { SecretGuard } from '../../components/KeySecretStep.js';
import { Notice } from '../../components/Notice.js';
import { SecretOnce } from '../../components/SecretOnce.js';
import { ChannelSecretWarning } from './ChannelSecretWarning.js';

/** A new webhook channel's signing secret, shown once, with the guard against closing it unsaved. */
export function ChannelSecretShown({
  name,
  secret,
  guard,
  onClose,
}: {
  name: string;
  secret: string;
  guard: SecretGuard;
  onClose: () => void;
}) {
  return (
    <div class="stack" onCopy={guard.markCopied}>
      <Notice tone="success">
        The webhook channel <strong>“{name}”</strong> was created. Its receiver checks each notification’s
        signature with this secret.
      </Notice>
      <SecretOnce label="Signing secret" secret={secret} kept="encrypted" onCopied={guard.markCopied} />
      {guard.confirming ? (
        <ChannelSecretWarning onBack={guard.goBack} onClose={onClose} />
      ) : (
        <div class="dialog-actions">
          <button type="button" class="button button-primary" onClick={guard.requestClose}>
            Done
          </button>
        </div>
      )}
    </div>
  );
}
