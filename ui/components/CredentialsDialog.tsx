import { useRef } from 'preact/hooks';
import type { Connection, Connector } from '../api-types.js';
import { fieldLabel } from './ConnectionField.js';
import { CredentialsForm } from './CredentialsForm.js';
import { CredentialsSecrets } from './CredentialsSecrets.js';
import { CredentialsUnknownConnector } from './CredentialsUnknownConnector.js';
import { Dialog } from './Dialog.js';
import { useCredentialsBinding } from './useCredentialsBinding.js';
import { useCredentialsFocus, useDialogClosed } from './useCredentialsFocus.js';
import { useSecretLeave } from './useSecretLeave.js';

/**
 * Binds the credentials of a connection's connector (contract §6), as a dialog over the list. A
 * secret hubgate generates is shown here once; closing before copying it asks first.
 */
export function CredentialsDialog({
  connection,
  connector,
  justCreated,
  onBound,
  onClose,
}: {
  connection: Connection;
  connector: Connector | undefined;
  justCreated?: boolean;
  onBound: (connection: Connection, generated: boolean) => void;
  onClose: () => void;
}) {
  const name = connection.displayName;
  const rebind = connection.credentialsBound;
  const binding = useCredentialsBinding(connection, connector?.credentialFields ?? [], onBound, onClose);
  const { secrets } = binding;
  const { confirming, setConfirming, copied, leave } = useSecretLeave(secrets, onClose);
  const body = useRef<HTMLDivElement>(null);
  useCredentialsFocus(body, secrets, binding.bind.error, confirming);
  useDialogClosed(body, onClose);

  const title = secrets
    ? `${fieldLabel(Object.keys(secrets)[0] ?? 'secret')} of “${name}”`
    : rebind
      ? `Replace the credentials of “${name}”`
      : `Bind credentials to “${name}”`;
  return (
    <Dialog title={title} onClose={secrets ? leave : onClose} wide>
      <div ref={body}>
        {secrets ? (
          <CredentialsSecrets
            name={name}
            secrets={secrets}
            overlapSeconds={rebind ? (connector?.rebindOverlapSeconds ?? 0) : 0}
            confirming={confirming}
            onCopied={copied}
            onBack={() => setConfirming(false)}
            onLeave={leave}
            onClose={onClose}
          />
        ) : connector ? (
          <CredentialsForm
            name={name}
            connector={connector}
            rebind={rebind}
            justCreated={justCreated}
            binding={binding}
            onClose={onClose}
          />
        ) : (
          <CredentialsUnknownConnector connectorKey={connection.connectorKey} onClose={onClose} />
        )}
      </div>
    </Dialog>
  );
}
