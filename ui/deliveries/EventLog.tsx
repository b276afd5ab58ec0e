// A connection's event log (docs/api/events.md): the filters, a page of deliveries newest first, each
// expanding to its attempts, retry of a failed one, and a reload every 3 s while one is moving.
import { Fragment } from 'preact';
import { useLocation } from 'preact-iso';
import { useEffect, useId, useState } from 'preact/hooks';
import { api, routeText } from '../common/api.js';
import { Due, formatPreciseDate, plural, Time } from '../common/format.js';
import { useResource, type Resource } from '../common/hooks.js';
import { RefreshButton } from '../common/Layout.js';
import { EmptyState, ErrorNotice, Loading, Notice, StatusBadge } from '../common/Notice.js';
import { Pager } from '../common/Pager.js';
import { routes, type Connection, type Delivery, type DeliveryStatus, type Page } from '../common/routes.js';
import { mayManage, reaches } from '../common/viewer.js';
import { DeliveryAttemptRow, DeliveryRetryButton, useDeliveryRetry } from './attempts.js';
import {
  connectionPage,
  DELIVERY_COLUMNS,
  DELIVERY_STATUS_WORDS,
  deliveryPage,
  filterKey,
  filterQuery,
  hasFilters,
  type LogFilters,
} from './log.js';
import { LogFilterForm } from './LogFilterForm.js';

/** While a delivery shown is still on its way, the log refreshes itself this often. */
const LIVE_REFRESH_MS = 3000;

/** Deliveries on their way are followed live, while the tab is visible and no retry is assumed. */
function useLiveRefresh(log: Resource<Page<Delivery>>, assumed: number) {
  const inFlight = (log.data?.data ?? []).some((d) =>
    ['pending', 'delivering', 'retrying'].includes(d.status),
  );
  useEffect(() => {
    if (!inFlight || assumed > 0) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') log.reload();
    }, LIVE_REFRESH_MS);
    return () => clearInterval(timer);
  }, [inFlight, assumed, log.reload]);
}

/**
 * One page of the event log of connection `id` with its filters: which rows show their attempts, a
 * refresh asked for by hand, and retries.
 */
type DeliveryLog = ReturnType<typeof useDeliveryLog>;

export function useDeliveryLog(id: string, filters: LogFilters, cursor: string | null) {
  // A cursor is valid only with the filters it was made with (docs/api/events.md): both come from the URL,
  // which drops the cursor whenever a filter changes.
  const log = useResource(
    (signal) =>
      api(routes.deliveries.log, { params: { id }, query: { ...filterQuery(filters), cursor }, signal }),
    `log ${id} ${filterKey(filters)} ${cursor ?? ''}`,
  );
  const [expanded, setExpanded] = useState<Set<string>>(new Set());
  const [queued, setQueued] = useState<Map<string, string>>(new Map());
  const [manual, setManual] = useState(false);
  const retry = useDeliveryRetry(
    id,
    (deliveryId) => setQueued((current) => new Map(current).set(deliveryId, 'pending')),
    log.reload,
  );

  // A new answer replaces what a retry assumed ("pending") with what the log says.
  useEffect(() => setQueued(new Map()), [log.data]);
  useEffect(() => {
    if (!log.loading) setManual(false);
  }, [log.loading]);
  useLiveRefresh(log, queued.size);

  const deliveries = (log.data?.data ?? []).map((d) => {
    const assumed = queued.get(d.id);
    return assumed ? { ...d, status: assumed as DeliveryStatus } : d;
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
  return { log, deliveries, expanded, toggle, refreshing: manual && log.loading, refresh, retry };
}

/** The column headings of the event log's table. */
function DeliveryTableHead() {
  return (
    <thead>
      <tr>
        <th scope="col" class="disclosure-cell">
          <span class="visually-hidden">Attempts</span>
        </th>
        <th scope="col">Event</th>
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
  );
}

/** Every attempt of one delivery: when, how long, where to, what came back, and why it failed. */
function DeliveryAttempts({ delivery }: { delivery: Delivery }) {
  if (delivery.attempts.length === 0) {
    return (
      <p class="attempts-none">
        No attempt yet.
        {delivery.nextAttemptAt ? (
          <>
            {' '}
            The first is due <Due at={delivery.nextAttemptAt} />.
          </>
        ) : null}
      </p>
    );
  }
  return (
    <table class="attempts">
      <caption>Attempts of {delivery.eventId}</caption>
      <thead>
        <tr>
          <th scope="col" class="num">
            Attempt
          </th>
          <th scope="col">Started</th>
          <th scope="col" class="num">
            Duration
          </th>
          <th scope="col">Remote address</th>
          <th scope="col" class="num">
            Response
          </th>
          <th scope="col">Outcome</th>
        </tr>
      </thead>
      <tbody>
        {delivery.attempts.map((attempt) => (
          <DeliveryAttemptRow key={attempt.number} attempt={attempt} />
        ))}
      </tbody>
    </table>
  );
}

/** The row under an expanded delivery: its attempts, their count, when it was delivered, its ID. */
function DeliveryAttemptsRow({ delivery, id }: { delivery: Delivery; id: string }) {
  return (
    <tr class="attempts-row" id={id}>
      <td colSpan={DELIVERY_COLUMNS} data-label="Attempts">
        <DeliveryAttempts delivery={delivery} />
        <p class="attempts-summary muted">
          {plural(delivery.attemptCount, 'attempt')}
          {delivery.deliveredAt ? (
            <>
              {' '}
              · delivered{' '}
              <time dateTime={delivery.deliveredAt}>{formatPreciseDate(delivery.deliveredAt)}</time>
            </>
          ) : null}{' '}
          · delivery ID <span class="mono">{delivery.id}</span>
        </p>
      </td>
    </tr>
  );
}

/** A long event type may break after each dot (`employee.contract.signed`), never inside a word. */
function breakable(type: string) {
  return type.split('.').map((part, index) => (
    <Fragment key={index}>
      {index > 0 ? (
        <>
          .<wbr />
        </>
      ) : null}
      {part}
    </Fragment>
  ));
}

function LastAndNext({ delivery, waitHref }: { delivery: Delivery; waitHref: string | null }) {
  const last = delivery.attempts[delivery.attempts.length - 1];
  const waiting = delivery.status === 'pending' || delivery.status === 'retrying';
  if (!last && !(waiting && delivery.nextAttemptAt) && !delivery.waitingFor)
    return <span class="muted">—</span>;
  return (
    <span class="last-next">
      {last ? <Time at={last.startedAt} /> : null}
      {delivery.waitingFor && waitHref ? (
        // Per-key ordering (docs/api/events.md): it goes once the earlier delivery of its key has ended.
        <span class="muted">
          After the earlier event of its key:{' '}
          <a class="mono break" href={waitHref}>
            <span class="visually-hidden">waits for </span>
            {delivery.waitingFor}
          </a>
        </span>
      ) : null}
      {waiting && delivery.nextAttemptAt ? (
        <span class="muted">
          Next <Due at={delivery.nextAttemptAt} />
        </span>
      ) : null}
    </span>
  );
}

/**
 * The event: its type (tagged when it is a test) and, under it, its ID, which leads to the delivery's page.
 */
function DeliveryEventCell({ delivery, detailHref }: { delivery: Delivery; detailHref: string }) {
  return (
    <th scope="row" class="event-cell">
      <span class="mono event-type">
        {breakable(delivery.eventType)}
        {delivery.test ? <span class="tag">test</span> : null}
      </span>
      <a class="mono event-id" href={detailHref}>
        <span class="visually-hidden">Details of </span>
        {delivery.eventId}
      </a>
      {delivery.orderingKey !== null ? (
        // Per-key ordering (docs/api/events.md): the key this delivery is ordered by.
        <span class="event-key muted">
          Ordering key <span class="mono break">{delivery.orderingKey}</span>
        </span>
      ) : null}
    </th>
  );
}

/** One delivery of the event log and, when expanded, its attempts. */
function DeliveryRow({
  delivery,
  expanded,
  onToggle,
  detailHref,
  waitHref,
  canRetry,
  retrying,
  onRetry,
}: {
  delivery: Delivery;
  expanded: boolean;
  onToggle: () => void;
  /** The delivery's own page: payload, each attempt's request and response. */
  detailHref: string;
  /** The page of the delivery it waits for (per-key ordering), if it waits. */
  waitHref: string | null;
  canRetry: boolean;
  retrying: boolean;
  onRetry: () => void;
}) {
  const attemptsId = `attempts-${delivery.id}`;
  return (
    <>
      <tr class={expanded ? 'delivery delivery-open' : 'delivery'}>
        <td class="disclosure-cell" data-label="Attempt list">
          <button
            type="button"
            class="disclosure"
            aria-expanded={expanded}
            aria-controls={attemptsId}
            onClick={onToggle}
          >
            <span class="disclosure-icon" aria-hidden="true" />
            <span class="visually-hidden">Show attempts of {delivery.eventId}</span>
          </button>
        </td>
        <DeliveryEventCell delivery={delivery} detailHref={detailHref} />
        <td data-label="Status">
          <StatusBadge status={delivery.status} label={DELIVERY_STATUS_WORDS[delivery.status]} />
        </td>
        <td class="num" data-label="Attempts">
          {delivery.attemptCount}
        </td>
        <td class="delivery-time" data-label="Created">
          <Time at={delivery.createdAt} />
        </td>
        <td data-label="Last / next attempt">
          <LastAndNext delivery={delivery} waitHref={waitHref} />
        </td>
        <td class="actions">
          {canRetry && delivery.status === 'failed' ? (
            <DeliveryRetryButton eventId={delivery.eventId} retrying={retrying} onRetry={onRetry} />
          ) : null}
        </td>
      </tr>
      {expanded ? <DeliveryAttemptsRow delivery={delivery} id={attemptsId} /> : null}
    </>
  );
}

/** A page of the event log: one row per delivery, each with its attempts behind a disclosure. */
function DeliveryTable({
  name,
  filtered,
  deliveries,
  expanded,
  onToggle,
  detailHref,
  waitHref,
  canRetry,
  retrying,
  onRetry,
}: {
  name: string;
  filtered: boolean;
  deliveries: Delivery[];
  expanded: Set<string>;
  onToggle: (deliveryId: string) => void;
  detailHref: (delivery: Delivery) => string;
  waitHref: (deliveryId: string) => string;
  canRetry: boolean;
  retrying: boolean;
  onRetry: (delivery: Delivery) => void;
}) {
  return (
    <div class="table-wrap">
      <table class="deliveries cards-on-phone">
        <caption class="visually-hidden">
          Deliveries to {name}, newest first{filtered ? ', filtered' : ''}
        </caption>
        <DeliveryTableHead />
        <tbody>
          {deliveries.map((delivery) => (
            <DeliveryRow
              key={delivery.id}
              delivery={delivery}
              expanded={expanded.has(delivery.id)}
              onToggle={() => onToggle(delivery.id)}
              detailHref={detailHref(delivery)}
              waitHref={delivery.waitingFor ? waitHref(delivery.waitingFor) : null}
              canRetry={canRetry}
              retrying={retrying}
              onRetry={() => onRetry(delivery)}
            />
          ))}
          {deliveries.length === 0 ? (
            <tr>
              <td colSpan={DELIVERY_COLUMNS} class="muted" data-label="Deliveries">
                Nothing more on this page.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
    </div>
  );
}

/** What an empty log says when it is filtered by one status only. */
const EMPTY: Record<DeliveryStatus, string> = {
  pending: 'No pending deliveries',
  delivering: 'Nothing is being delivered right now',
  retrying: 'No deliveries waiting to be retried',
  delivered: 'No delivered events',
  failed: 'No failed deliveries',
  cancelled: 'No cancelled deliveries',
  skipped: 'No deliveries skipped while paused',
};

/** Only a status filter, and one status: the log can say which. */
function onlyStatus(filters: LogFilters): DeliveryStatus | null {
  const [first, ...rest] = filters.status;
  return first && rest.length === 0 && !hasFilters({ ...filters, status: [] }) ? first : null;
}

/** A log filtered down to nothing: by one status, or by several filters. */
function NoneMatch({
  connection,
  filters,
  here,
}: {
  connection: Connection;
  filters: LogFilters;
  here: string;
}) {
  const status = onlyStatus(filters);
  return (
    <EmptyState title={status ? EMPTY[status] : 'No deliveries match these filters'}>
      <p>
        {status
          ? `No delivery to “${connection.displayName}” has the status “${DELIVERY_STATUS_WORDS[status]}” now.`
          : 'Try a wider time range, or fewer filters.'}
      </p>
      <a class="button" href={here}>
        Show all events
      </a>
    </EmptyState>
  );
}

/** An event log with nothing in it: none matching the filters, or none at all yet and why. */
function DeliveryLogEmpty({
  connection,
  filters,
  here,
  canOperate,
  onBind,
}: {
  connection: Connection;
  filters: LogFilters;
  here: string;
  canOperate: boolean;
  onBind: () => void;
}) {
  if (hasFilters(filters)) return <NoneMatch connection={connection} filters={filters} here={here} />;
  const bind = !connection.deliveryEnabled && connection.status === 'active' && mayManage();
  return (
    <EmptyState title="No events yet">
      <p>
        {reaches(routes.deliveries.publish) ? (
          <>
            Events appear here once they are published to <code>{routeText(routes.deliveries.publish)}</code>
          </>
        ) : (
          'Events appear here once they are sent to it'
        )}
        {connection.credentialsBound ? '.' : ' and this connection has credentials (it has none yet).'}
        {connection.deliveryEnabled && canOperate ? ' “Send test event” tries it now.' : ''}
      </p>
      {bind ? (
        <button type="button" class="button button-primary" onClick={onBind}>
          Bind credentials
        </button>
      ) : null}
    </EmptyState>
  );
}

/** The event log under its filters: its failure, loading, an empty log, or a page of deliveries. */
function DeliveryLogBody({
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
        waitHref={(deliveryId) => deliveryPage(connection.id, deliveryId, back)}
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
