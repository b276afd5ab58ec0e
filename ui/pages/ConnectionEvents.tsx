import { useLocation, useRoute } from 'preact-iso';
import { useId } from 'preact/hooks';
import type { Connection, Connector, DeliveryStatus, Page } from '../api-types.js';
import { api, withQuery } from '../api.js';
import { ConnectionEventsFallback } from '../components/ConnectionEventsFallback.js';
import { ConnectionSummary } from '../components/ConnectionSummary.js';
import { DELIVERY_STATUSES } from '../components/deliveryLog.js';
import { DeliveryLogBody } from '../components/DeliveryLogBody.js';
import { DeliveryLogToolbar } from '../components/DeliveryLogToolbar.js';
import { ErrorNotice, Notice } from '../components/Notice.js';
import { PageHeader } from '../components/PageHeader.js';
import { useDeliveryLog } from '../components/useDeliveryLog.js';
import { useResource } from '../hooks.js';
import { session } from '../session.js';

const isStatus = (value: string | undefined): value is DeliveryStatus =>
  DELIVERY_STATUSES.includes(value as DeliveryStatus);

/** A connection's event log (contract §12): filter by status, newest first, attempts, retry. */
export function ConnectionEventsPage() {
  const { params } = useRoute();
  const { query, route } = useLocation();
  const id = params.id ?? '';
  const status = isStatus(query.status) ? query.status : null;
  const cursor = query.cursor ?? null;
  const filterId = useId();
  const canOperate = session.value?.user.role !== 'MEMBER';
  const base = `/api/v1/integrations/connections/${encodeURIComponent(id)}`;
  const here = `/connections/${encodeURIComponent(id)}/events`;

  const connection = useResource((signal) => api<Connection>('GET', base, { signal }), `connection ${id}`);
  const catalog = useResource(
    (signal) => api<Page<Connector>>('GET', '/api/v1/integration-hub/connectors', { signal }),
    'catalog',
  );
  const log = useDeliveryLog(base, id, status, cursor);
  if (connection.error || !connection.data) return <ConnectionEventsFallback error={connection.error} />;

  const current = connection.data;
  const connectorName =
    catalog.data?.data.find((c) => c.connectorKey === current.connectorKey)?.name ?? current.connectorKey;
  const { retried, notice } = log.retry;
  return (
    <>
      <PageHeader
        title={current.displayName}
        description={`Event log: every delivery of this ${connectorName} connection, newest first, with each attempt.`}
        back={{ href: '/connections', label: 'Connections' }}
      />
      <ConnectionSummary connection={current} connector={connectorName} />
      <section class="stack" aria-labelledby={`${filterId}-title`}>
        <DeliveryLogToolbar
          filterId={filterId}
          status={status}
          onStatus={(value) => route(withQuery(here, { status: value }))}
          refreshing={log.refreshing}
          onRefresh={log.refresh}
        />
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
          connection={current}
          status={status}
          cursor={cursor}
          here={here}
          canOperate={canOperate}
        />
      </section>
    </>
  );
}
