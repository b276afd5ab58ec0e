import { Notice } from './Notice.js';

/** A connector missing from the catalog: its credential fields are not known, so there is no form. */
export function CredentialsUnknownConnector({
  connectorKey,
  onClose,
}: {
  connectorKey: string;
  onClose: () => void;
}) {
  return (
    <>
      <Notice tone="warning">
        The connector “{connectorKey}” is not in the catalog, so its credential fields are not known. Reload
        the page and try again.
      </Notice>
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onClose}>
          Close
        </button>
      </div>
    </>
  );
}
