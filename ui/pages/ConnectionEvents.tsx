import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, ApiError, withQuery } from '../api.js';
import type { Connection, Connector, Delivery, DeliveryStatus, Page } from '../api-types.js';
import { DELIVERY_COLUMNS, DELIVERY_STATUS_WORDS, DeliveryRow } from '../components/DeliveryRow.js';
import { EmptyState } from '../components/EmptyState.js';
import { Loading } from '../components/Loading.js';
import { ErrorNotice, Notice } from '../components/Notice.js';
import { PageHeader } from '../components/PageHeader.js';
import { Pager } from '../components/Pager.js';
import { StatusBadge } from '../components/StatusBadge.js';
import { Time } from '../components/Time.js';
import { useAction, useResource } from '../hooks.js';
import { session } from '../session.js';

const STATUSES = Object.keys(DELIVERY_STATUS_WORDS) as DeliveryStatus[];
const isStatus = (value: string | undefined): value is DeliveryStatus =>
  STATUSES.includes(value as DeliveryStatus);

/** While a delivery shown is still on its way, the log refreshes itself this often. */
const LIVE_REFRESH_MS = 3000;

/** What an empty log says, for each filter. */
const EMPTY: Record<DeliveryStatus, string> = {
  pending: 'No pending deliveries',
  delivering: 'Nothing is being delivered right now',
  retrying: 'No deliveries waiting to be retried',
  delivered: 'No delivered events',
  failed: 'No failed deliveries',
  cancelled: 'No cancelled deliveries',
};

function ConnectionSummary({ connection, connector }: { connection: Connection; connector: string }) {
  const url = typeof connection.config.url === 'string' ? connection.config.url : null;
  const eventTypes = Array.isArray(connection.config.eventTypes)
    ? (connection.config.eventTypes as unknown[]).map(String)
    : null;
  const active = connection.status === 'active';
  return (
    <section class="card" aria-label="Connection">
      <dl class="connection-facts">
        <div>
          <dt>Connector</dt>
          <dd>{connector}</dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={connection.status} label={active ? 'Active' : 'Revoked'} />
            {connection.revokedAt ? (
              <span class="muted">
                {' '}
                since <Time at={connection.revokedAt} mode="absolute" />
              </span>
            ) : null}
          </dd>
        </div>
        <div>
          <dt>Delivery</dt>
          <dd>
            {connection.deliveryEnabled ? (
              <StatusBadge status="delivered" label="Enabled" />
            ) : active ? (
              <>
                <StatusBadge status="expired" label="Needs credentials" />{' '}
                <a href={withQuery('/connections', { bind: connection.id })}>Bind credentials</a>
              </>
            ) : (
              <span class="muted">Off: nothing is sent to a revoked connection</span>
            )}
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <Time at={connection.createdAt} mode="absolute" />
          </dd>
        </div>
        {url ? (
          <div class="connection-fact-wide">
            <dt>Receiver URL</dt>
            <dd class="mono break">{url}</dd>
          </div>
        ) : null}
        <div>
          <dt>Event types</dt>
          <dd class={eventTypes ? 'mono break' : undefined}>
            {eventTypes ? eventTypes.join(', ') : 'All events'}
          </dd>
        </div>
        <div>
          <dt>Connection ID</dt>
          <dd class="mono break">{connection.id}</dd>
        </div>
      </dl>
    </section>
  );
}

/** A retry refused (409), in words: a revoked connection, or a delivery that is no longer failed. */
function retryFailure(error: ApiError): ApiError {
  if (error.code !== 'conflict' || !/disabled/.test(error.message)) return error;
  return new ApiError(
    error.status,
    error.code,
    'The connection is revoked, so nothing is sent to it any more.',
    error.fieldErrors,
    error.requestId,
  );
}

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
  const log = useResource(
    (signal) =>
      api<Page<Delivery>>('GET', withQuery(`${base}/events`, { status, cursor }), {
        signal,
      }),
    `log ${id} ${status ?? ''} ${cursor ?? ''}`,
  );

  const [expanded, setExpanded] = useState<Set<string>>(new Set());
  const [queued, setQueued] = useState<Map<string, string>>(new Map());
  const [manual, setManual] = useState(false);
  const [retried, setRetried] = useState<string | null>(null);
  // The retried row may leave the list (filtered by "failed"): the notice takes the focus instead.
  const retriedNotice = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (retried) retriedNotice.current?.focus();
  }, [retried]);

  // A new answer replaces what a retry assumed ("pending") with what the log says.
  useEffect(() => setQueued(new Map()), [log.data]);
  useEffect(() => {
    if (!log.loading) setManual(false);
  }, [log.loading]);

  // Deliveries on their way are followed live, while the tab is visible.
  const inFlight = (log.data?.data ?? []).some((d) =>
    ['pending', 'delivering', 'retrying'].includes(d.status),
  );
  useEffect(() => {
    if (!inFlight || queued.size > 0) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') log.reload();
    }, LIVE_REFRESH_MS);
    return () => clearInterval(timer);
  }, [inFlight, queued.size, log.reload]);

  const retry = useAction(async (delivery: Delivery) => {
    setRetried(null);
    try {
      await api('POST', `${base}/events/${encodeURIComponent(delivery.id)}/retry`);
    } catch (error) {
      throw error instanceof ApiError ? retryFailure(error) : error;
    }
    setQueued((current) => new Map(current).set(delivery.id, 'pending'));
    setRetried(delivery.eventId);
    log.reload();
  });

  const refresh = () => {
    setManual(true);
    log.reload();
  };
  const toggle = (deliveryId: string) =>
    setExpanded((current) => {
      const next = new Set(current);
      if (!next.delete(deliveryId)) next.add(deliveryId);
      return next;
    });

  if (connection.error?.code === 'not_found') {
    return (
      <>
        <PageHeader title="Connection not found" back={{ href: '/connections', label: 'Connections' }} />
        <section class="card card-narrow">
          <p>There is no connection at this address in your organization. It may have been mistyped.</p>
          <a class="button button-primary" href="/connections">
            Back to connections
          </a>
        </section>
      </>
    );
  }
  if (connection.error) {
    return (
      <>
        <PageHeader title="Event log" back={{ href: '/connections', label: 'Connections' }} />
        <ErrorNotice error={connection.error} title="The connection could not be loaded." />
      </>
    );
  }
  if (!connection.data) {
    return (
      <>
        <PageHeader title="Event log" back={{ href: '/connections', label: 'Connections' }} />
        <Loading what="Loading the connection" />
      </>
    );
  }

  const current = connection.data;
  const connectorName =
    catalog.data?.data.find((c) => c.connectorKey === current.connectorKey)?.name ?? current.connectorKey;
  const canRetry = canOperate && current.status === 'active';
  const deliveries = (log.data?.data ?? []).map((d) => {
    const assumed = queued.get(d.id);
    return assumed ? { ...d, status: assumed as DeliveryStatus } : d;
  });

  let list;
  if (log.error) {
    list = <ErrorNotice error={log.error} title="The event log could not be loaded." />;
  } else if (!log.data) {
    list = <Loading what="Loading the event log" />;
  } else if (deliveries.length === 0 && !cursor) {
    list = status ? (
      <EmptyState title={EMPTY[status]}>
        <p>
          No delivery to “{current.displayName}” has the status “{DELIVERY_STATUS_WORDS[status]}” now.
        </p>
        <a class="button" href={here}>
          Show all events
        </a>
      </EmptyState>
    ) : (
      <EmptyState title="No events yet">
        <p>
          Events appear here once they are published to <code>POST /api/v1/integrations/events</code> and this
          connection has credentials{current.deliveryEnabled ? '' : ' (it has none yet)'}.
        </p>
        {!current.deliveryEnabled && current.status === 'active' && canOperate ? (
          <a class="button button-primary" href={withQuery('/connections', { bind: current.id })}>
            Bind credentials
          </a>
        ) : null}
      </EmptyState>
    );
  } else {
    list = (
      <>
        <div class="table-wrap">
          <table class="deliveries">
            <caption class="visually-hidden">
              Deliveries to {current.displayName}, newest first
              {status ? `, ${DELIVERY_STATUS_WORDS[status].toLowerCase()} only` : ''}
            </caption>
            <thead>
              <tr>
                <th scope="col" class="disclosure-cell">
                  <span class="visually-hidden">Attempts</span>
                </th>
                <th scope="col">Event type</th>
                <th scope="col">Event ID</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Attempts
                </th>
                <th scope="col">Created</th>
                <th scope="col">Last / next attempt</th>
                <th scope="col" class="actions">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((delivery) => (
                <DeliveryRow
                  key={delivery.id}
                  delivery={delivery}
                  expanded={expanded.has(delivery.id)}
                  onToggle={() => toggle(delivery.id)}
                  canRetry={canRetry}
                  retrying={retry.busy}
                  onRetry={() => void retry.run(delivery)}
                />
              ))}
              {deliveries.length === 0 ? (
                <tr>
                  <td colSpan={DELIVERY_COLUMNS} class="muted">
                    Nothing more on this page.
                  </td>
                </tr>
              ) : null}
            </tbody>
          </table>
        </div>
        <Pager
          cursor={cursor}
          nextCursor={log.data.nextCursor}
          hrefFor={(next) => withQuery(here, { status, cursor: next })}
          label="Pages of the event log"
        />
      </>
    );
  }

  return (
    <>
      <PageHeader
        title={current.displayName}
        description={`Event log: every delivery of this ${connectorName} connection, newest first, with each attempt.`}
        back={{ href: '/connections', label: 'Connections' }}
      />
      <ConnectionSummary connection={current} connector={connectorName} />
      <section class="stack" aria-labelledby={`${filterId}-title`}>
        <div class="log-toolbar">
          <h2 id={`${filterId}-title`}>Deliveries</h2>
          <div class="row">
            <label for={filterId}>Status</label>
            <select
              id={filterId}
              class="select-inline"
              value={status ?? ''}
              onChange={(event) => route(withQuery(here, { status: event.currentTarget.value || undefined }))}
            >
              <option value="">All statuses</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {DELIVERY_STATUS_WORDS[s]}
                </option>
              ))}
            </select>
            <button type="button" class="button" onClick={refresh} aria-busy={manual && log.loading}>
              {manual && log.loading ? 'Refreshing…' : 'Refresh'}
            </button>
          </div>
        </div>
        {retried ? (
          <div ref={retriedNotice} tabIndex={-1} class="focus-target">
            <Notice tone="success">
              The delivery of <span class="mono">{retried}</span> is queued again.
            </Notice>
          </div>
        ) : null}
        <ErrorNotice error={retry.error} title="The delivery was not retried." />
        {list}
      </section>
    </>
  );
}
