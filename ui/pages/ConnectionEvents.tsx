import { useLocation, useRoute } from 'preact-iso';
import type { Connection, Connector, Page } from '../api-types.js';
import { api } from '../api.js';
import { ConnectionEventsFallback } from '../components/ConnectionEventsFallback.js';
import { PageHeader } from '../components/PageHeader.js';
import { ConnectionActions } from '../connection/ConnectionActions.js';
import { ConnectionLog } from '../connection/ConnectionLog.js';
import { ConnectionPageDialogs } from '../connection/ConnectionPageDialogs.js';
import { ConnectionStatusArea } from '../connection/ConnectionStatusArea.js';
import { filtersFrom } from '../connection/logFilters.js';
import { connectionApi, deliveryPage } from '../connection/paths.js';
import { useConnectionPage } from '../connection/useConnectionPage.js';
import { useDeliveryLog } from '../connection/useDeliveryLog.js';
import { useResource } from '../hooks.js';
import { session } from '../session.js';

const useCatalog = () =>
  useResource(
    (signal) => api<Page<Connector>>('GET', '/api/v1/integration-hub/connectors', { signal }),
    'catalog',
  );

/**
 * A connection's page (contract §12, §15): what it is and whether it delivers, its event log with
 * filters kept in the URL, and, for those who may operate it, test, pause and resume, recover, edit.
 */
export function ConnectionEventsPage() {
  const { params } = useRoute();
  const { query } = useLocation();
  const id = params.id ?? '';
  const filters = filtersFrom(query);
  const cursor = query.cursor ?? null;
  const canOperate = session.value?.user.role !== 'MEMBER';
  const base = connectionApi(id);

  const connection = useResource((signal) => api<Connection>('GET', base, { signal }), `connection ${id}`);
  const catalog = useCatalog();
  const log = useDeliveryLog(base, id, filters, cursor);
  const page = useConnectionPage(id, connection, log.log.reload);
  if (connection.error || !connection.data) return <ConnectionEventsFallback error={connection.error} />;

  const current = connection.data;
  const connector = catalog.data?.data.find((c) => c.connectorKey === current.connectorKey);
  const connectorName = connector?.name ?? current.connectorKey;
  return (
    <>
      <PageHeader
        title={current.displayName}
        description={`${connectorName} connection: every delivery, newest first, with what was sent and what the receiver answered.`}
        back={{ href: '/connections', label: 'Connections' }}
        actions={
          canOperate ? (
            <ConnectionActions
              connection={current}
              editable={Boolean(connector)}
              testing={page.test.busy}
              onTest={() => void page.test.send()}
              onOpen={page.setOpen}
            />
          ) : null
        }
      />
      <ConnectionStatusArea
        page={page}
        connection={current}
        connectorName={connectorName}
        canOperate={canOperate}
        detailHref={(deliveryId) => deliveryPage(id, deliveryId)}
      />
      <ConnectionLog
        log={log}
        connection={current}
        filters={filters}
        cursor={cursor}
        canOperate={canOperate}
        onBind={() => page.setOpen('bind')}
      />
      <ConnectionPageDialogs
        page={page}
        connection={current}
        connector={connector}
        onBound={connection.reload}
      />
    </>
  );
}
