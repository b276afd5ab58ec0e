import { useLocation } from 'preact-iso';
import { useId } from 'preact/hooks';
import type { Connection } from '../api-types.js';
import { ErrorNotice, Notice } from '../components/Notice.js';
import { RefreshButton } from '../components/RefreshButton.js';
import { DeliveryLogBody } from './DeliveryLogBody.js';
import { LogFilterForm } from './LogFilterForm.js';
import { hasFilters, type LogFilters } from './logFilters.js';
import { connectionPage } from './paths.js';
import type { DeliveryLog } from './useDeliveryLog.js';

/** The connection's deliveries: heading and Refresh, the filters, what a retry did, the page of the log. */
export function ConnectionLog({
  log,
  connection,
  filters,
  cursor,
  canOperate,
  onBind,
}: {
  log: DeliveryLog;
  connection: Connection;
  filters: LogFilters;
  cursor: string | null;
  canOperate: boolean;
  onBind: () => void;
}) {
  const { route } = useLocation();
  const titleId = useId();
  const { retried, notice } = log.retry;
  // Nothing to filter in a log that has never held anything.
  const empty = log.log.data?.data.length === 0 && !cursor && !hasFilters(filters);
  return (
    <section class="stack log-section" aria-labelledby={titleId}>
      <div class="log-toolbar">
        <h2 id={titleId}>Deliveries</h2>
        <RefreshButton loading={log.refreshing} onRefresh={log.refresh} />
      </div>
      {/* A new filter starts from the first page: a cursor holds only for the filters it was made with. */}
      {empty ? null : (
        <LogFilterForm filters={filters} onApply={(next) => route(connectionPage(connection.id, next))} />
      )}
      {retried ? (
        <div ref={notice} tabIndex={-1} class="focus-target">
          <Notice tone="success">
            The delivery of <span class="mono">{retried}</span> is queued again.
          </Notice>
        </div>
      ) : null}
      <ErrorNotice error={log.retry.action.error} title="The delivery was not retried." />
      <DeliveryLogBody
        log={log}
        connection={connection}
        filters={filters}
        cursor={cursor}
        canOperate={canOperate}
        onBind={onBind}
      />
    </section>
  );
}
