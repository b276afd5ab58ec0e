import type { AllowedScopesAnswer } from '../api-types.js';
import { api } from '../api.js';
import { formatDate } from '../format.js';
import { useResource } from '../hooks.js';
import { Dialog } from './Dialog.js';
import { DialogLoadFailed } from './DialogLoadFailed.js';
import { KeyCreateForm } from './KeyCreateForm.js';
import { scopeSummary } from './KeyScopeList.js';
import { KeySecretStep, useSecretGuard } from './KeySecretStep.js';
import { Loading } from './Loading.js';
import { useKeyCreate } from './useKeyCreate.js';

const ignore = () => undefined;

/**
 * Creating a key (contract §4): a name, scopes from allowed-scopes, an expiry (90 days unless
 * changed); then its secret, shown once. `onCreated` lets the list show the new key meanwhile.
 */
export function KeyCreateDialog({ onClose, onCreated }: { onClose: () => void; onCreated: () => void }) {
  const guard = useSecretGuard(onClose);
  const allowed = useResource(
    (signal) => api<AllowedScopesAnswer>('GET', '/api/v1/company/api-keys/allowed-scopes', { signal }),
    'allowed-scopes',
  );
  const create = useKeyCreate(allowed.data, onCreated);
  const { created } = create;

  if (created) {
    return (
      <Dialog
        title="Save your API key"
        wide
        onClose={onClose}
        onCancel={guard.confirming ? guard.goBack : guard.requestClose}
      >
        <KeySecretStep secret={created.secret} guard={guard} onClose={onClose}>
          <strong>“{created.name}”</strong> was created with {scopeSummary(created.scopes)}. It expires on{' '}
          {formatDate(created.expiresAt)}.
        </KeySecretStep>
      </Dialog>
    );
  }
  return (
    // Escape while the key is being made would lose its secret: it waits for the answer.
    <Dialog title="Create an API key" wide onClose={onClose} onCancel={create.submit.busy ? ignore : onClose}>
      {allowed.error ? (
        <DialogLoadFailed error={allowed.error} title="The scopes could not be loaded." onClose={onClose} />
      ) : !allowed.data ? (
        <Loading what="Loading the scopes" />
      ) : (
        <KeyCreateForm create={create} modules={allowed.data.modules} onClose={onClose} />
      )}
    </Dialog>
  );
}
