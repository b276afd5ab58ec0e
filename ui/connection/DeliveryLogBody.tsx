import type { Connection } from '../api-types.js';
import { DeliveryTable } from '../components/DeliveryTable.js';
import { Loading } from '../components/Loading.js';
import { ErrorNotice } from '../components/Notice.js';
import { Pager } from '../components/Pager.js';
import { DeliveryLogEmpty } from './DeliveryLogEmpty.js';
import { filterQuery, hasFilters, type LogFilters } from './logFilters.js';
import { connectionPage, deliveryPage } from './paths.js';
import type { DeliveryLog } from './useDeliveryLog.js';

/** The event log under its filters: its failure, loading, an empty log, or a page of deliveries. */
export function DeliveryLogBody({
  log,
  connection,
  filters,
  cursor,
  canOperate,
  onBind,
}: {
  onBind: () => void;
  log: DeliveryLog;
  connection: Connection;
  filters: LogFilters;
  cursor: string | null;
  canOperate: boolean;
}) {
  const { data, error } = log.log;
  if (error) return <ErrorNotice error={error} title="The event log could not be loaded." />;
  if (!data) return <Loading what="Loading the event log" />;
  const here = connectionPage(connection.id);
  if (log.deliveries.length === 0 && !cursor) {
    return (
      <DeliveryLogEmpty
        connection={connection}
        filters={filters}
        here={here}
        canOperate={canOperate}
        onBind={onBind}
      />
    );
  }
  // A delivery's page returns to this very list: the same filters and page.
  const back = { ...filterQuery(filters), ...(cursor ? { cursor } : {}) };
  return (
    <>
      <DeliveryTable
        name={connection.displayName}
        filtered={hasFilters(filters)}
        deliveries={log.deliveries}
        expanded={log.expanded}
        onToggle={log.toggle}
        detailHref={(delivery) => deliveryPage(connection.id, delivery.id, back)}
        canRetry={canOperate && connection.status === 'active'}
        retrying={log.retry.action.busy}
        onRetry={(delivery) => void log.retry.action.run(delivery)}
      />
      <Pager
        cursor={cursor}
        nextCursor={data.nextCursor}
        hrefFor={(next) => connectionPage(connection.id, filters, next)}
        label="Pages of the event log"
      />
    </>
  );
}
