import type { Connection, DeliveryStatus } from '../api-types.js';
import { withQuery } from '../api.js';
import { DeliveryLogEmpty } from './DeliveryLogEmpty.js';
import { DeliveryTable } from './DeliveryTable.js';
import { Loading } from './Loading.js';
import { ErrorNotice } from './Notice.js';
import { Pager } from './Pager.js';
import type { DeliveryLog } from './useDeliveryLog.js';

/** The event log under its toolbar: its failure, loading, an empty log, or a page of deliveries. */
export function DeliveryLogBody({
  log,
  connection,
  status,
  cursor,
  here,
  canOperate,
}: {
  log: DeliveryLog;
  connection: Connection;
  status: DeliveryStatus | null;
  cursor: string | null;
  here: string;
  canOperate: boolean;
}) {
  const { data, error } = log.log;
  if (error) return <ErrorNotice error={error} title="The event log could not be loaded." />;
  if (!data) return <Loading what="Loading the event log" />;
  if (log.deliveries.length === 0 && !cursor) {
    return <DeliveryLogEmpty connection={connection} status={status} here={here} canOperate={canOperate} />;
  }
  return (
    <>
      <DeliveryTable
        name={connection.displayName}
        status={status}
        deliveries={log.deliveries}
        expanded={log.expanded}
        onToggle={log.toggle}
        canRetry={canOperate && connection.status === 'active'}
        retrying={log.retry.action.busy}
        onRetry={(delivery) => void log.retry.action.run(delivery)}
      />
      <Pager
        cursor={cursor}
        nextCursor={data.nextCursor}
        hrefFor={(next) => withQuery(here, { status, cursor: next })}
        label="Pages of the event log"
      />
    </>
  );
}
