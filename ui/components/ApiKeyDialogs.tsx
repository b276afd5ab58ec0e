import type { ApiKeyDialog } from './apiKeyDialog.js';
import { KeyCreateDialog } from './KeyCreateDialog.js';
import { KeyRevokeDialog } from './KeyRevokeDialog.js';
import { KeyRotateDialog } from './KeyRotateDialog.js';

/** The dialog open over the API keys page, if any: create, rotate or revoke. */
export function ApiKeyDialogs({
  open,
  onChanged,
  onRevoked,
  onClose,
}: {
  open: ApiKeyDialog;
  /** The list is out of date. */
  onChanged: () => void;
  onRevoked: (name: string) => void;
  onClose: () => void;
}) {
  return (
    <>
      {open?.kind === 'create' ? <KeyCreateDialog onClose={onClose} onCreated={onChanged} /> : null}
      {open?.kind === 'rotate' ? (
        <KeyRotateDialog apiKey={open.key} onClose={onClose} onRotated={onChanged} />
      ) : null}
      {open?.kind === 'revoke' ? (
        <KeyRevokeDialog
          apiKey={open.key}
          onClose={onClose}
          onRevoked={() => {
            onRevoked(open.key.name);
            onChanged();
          }}
        />
      ) : null}
    </>
  );
}
