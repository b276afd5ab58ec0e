import type { Connection } from '../api-types.js';
import { api } from '../api.js';
import { ConfirmDialog } from '../components/Dialog.js';
import { ErrorNotice } from '../components/Notice.js';
import { useAction } from '../hooks.js';
import { connectionApi } from './paths.js';

/** "Pause deliveries to “Orders webhook”?": what pausing does, and that resuming can send it all. */
export function PauseDialog({
  connection,
  onPaused,
  onClose,
}: {
  connection: Connection;
  onPaused: (connection: Connection) => void;
  onClose: () => void;
}) {
  const pause = useAction(async () => {
    onPaused(await api<Connection>('POST', `${connectionApi(connection.id)}/pause`));
  });
  return (
    <ConfirmDialog
      title={`Pause deliveries to “${connection.displayName}”?`}
      confirmLabel="Pause deliveries"
      busy={pause.busy}
      onConfirm={() => void pause.run()}
      onClose={onClose}
      error={<ErrorNotice error={pause.error} title="Deliveries were not paused." />}
    >
      <p>
        hubgate stops sending to this receiver. Deliveries waiting to be sent or retried, and every event
        published while it is paused, are kept as <strong>skipped</strong>.
      </p>
      <p class="muted">
        When you resume, you choose whether the skipped deliveries are sent then, oldest first.
      </p>
    </ConfirmDialog>
  );
}
