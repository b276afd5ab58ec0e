import type { ApiError } from '../api.js';
import { ErrorNotice } from './Notice.js';

/** What a dialog needed could not be loaded: why, and a way out. */
export function DialogLoadFailed({
  error,
  title,
  onClose,
}: {
  error: ApiError;
  title: string;
  onClose: () => void;
}) {
  return (
    <>
      <ErrorNotice error={error} title={title} />
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onClose}>
          Close
        </button>
      </div>
    </>
  );
}
