import type { Connection, Connector } from '../api-types.js';
import type { ApiError } from '../api.js';
import { CredentialsDialog } from '../components/CredentialsDialog.js';
import { EditDialog } from './EditDialog.js';
import { PauseDialog } from './PauseDialog.js';
import { RecoverDialog } from './RecoverDialog.js';
import { ResumeDialog } from './ResumeDialog.js';
import type { ConnectionPage } from './useConnectionPage.js';

/** The dialog open over the connection's page, if any. */
export function ConnectionPageDialogs({
  page,
  connection,
  connector,
  onBound,
}: {
  page: ConnectionPage;
  connection: Connection;
  /** Undefined until the catalog answered (or if it does not know the connector). */
  connector: Connector | undefined;
  onBound: () => void;
}) {
  const close = () => page.setOpen(null);
  switch (page.open) {
    case 'pause':
      return <PauseDialog connection={connection} onPaused={page.onPaused} onClose={close} />;
    case 'resume':
      return (
        <ResumeDialog
          connection={connection}
          skipped={page.skipped.data}
          countError={page.skipped.error as ApiError | undefined}
          onResumed={page.onResumed}
          onClose={close}
        />
      );
    case 'recover':
      return <RecoverDialog connection={connection} onRecovered={page.onRecovered} onClose={close} />;
    case 'edit':
      return connector ? (
        <EditDialog connection={connection} connector={connector} onSaved={page.onSaved} onClose={close} />
      ) : null;
    case 'bind':
      return (
        <CredentialsDialog connection={connection} connector={connector} onBound={onBound} onClose={close} />
      );
    default:
      return null;
  }
}
