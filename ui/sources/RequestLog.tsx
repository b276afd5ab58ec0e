// A source's request log (docs/api/sources.md): newest first, filtered by outcome (in the URL), each
// request's time, outcome, event type, provider delivery ID and event; expanded, its headers (signatures
// "[redacted]") and the first 4 KiB of its body, and the event logs its event may be in. The first page
// is read again every few seconds while the tab is visible: a provider's requests arrive by themselves.
import { Fragment } from 'preact';
import { useLocation } from 'preact-iso';
import { useId, useState } from 'preact/hooks';
import { api, withQuery } from '../common/api.js';
import { formatPreciseDate, plural, Time } from '../common/format.js';
import { HeaderTable, readable } from '../common/HeaderTable.js';
import { useFollow, useResource } from '../common/hooks.js';
import { RefreshButton } from '../common/Layout.js';
import { EmptyState, ErrorNotice, Loading } from '../common/Notice.js';
import { Pager } from '../common/Pager.js';
import { routes, type Connection, type Source, type SourceRequest } from '../common/routes.js';
import {
  isOutcome,
  OUTCOME_HELP,
  OUTCOME_TONES,
  OUTCOME_WORDS,
  OUTCOMES,
  sourcePage,
  takesEventType,
} from './words.js';

const COLUMNS = 6;

/** A long event type may break after each dot (`github.pull_request.opened`), never inside a word. */
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

function OutcomeBadge({ outcome }: { outcome: SourceRequest['outcome'] }) {
  return (
    <span class={`badge badge-${OUTCOME_TONES[outcome]}`} title={OUTCOME_HELP[outcome]}>
      {OUTCOME_WORDS[outcome]}
    </span>
  );
}

/**
 * Where the event went: no page shows one event across connections, so each connection whose event
 * types take it is linked with its event log filtered to this event (docs/operators/web-ui.md).
 */
function EventLinks({ request, connections }: { request: SourceRequest; connections: Connection[] }) {
  if (!request.eventId) return null;
  const type = request.eventType ?? '';
  const takers = connections.filter(
    (c) =>
      c.status !== 'disabled' &&
      !c.connectorKey.startsWith('oauth2:') &&
      takesEventType(c.config.eventTypes, type),
  );
  return (
    <section class="exchange-part" aria-label={`Event of ${request.id}`}>
      <h3>Event</h3>
      <p>
        Published as <span class="mono break">{request.eventId}</span>.{' '}
        {takers.length === 0
          ? 'No connection takes its event type, so it was delivered nowhere.'
          : 'Its deliveries:'}
      </p>
      {takers.length > 0 ? (
        <ul class="plain-list">
          {takers.map((c) => (
            <li key={c.id}>
              <a
                href={withQuery(`/connections/${encodeURIComponent(c.id)}/events`, {
                  eventId: request.eventId,
                })}
              >
                in the event log of “<bdi>{c.displayName}</bdi>”
              </a>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

function RequestDetail({
  request,
  id,
  connections,
}: {
  request: SourceRequest;
  id: string;
  connections: Connection[];
}) {
  return (
    <tr class="attempts-row source-request" id={id}>
      <td colSpan={COLUMNS}>
        <div class="stack">
          <p class="source-request-lead">
            <strong>{OUTCOME_WORDS[request.outcome]}:</strong> {OUTCOME_HELP[request.outcome]}.
          </p>
          <div class="exchange">
            <section class="exchange-part" aria-label={`Headers of ${request.id}`}>
              <h3>Headers</h3>
              <HeaderTable headers={request.headers} caption={`Headers of request ${request.id}`} />
            </section>
            <section class="exchange-part" aria-label={`Body of ${request.id}`}>
              <h3>Body{request.bodyTruncated ? ' (the first 4 KiB)' : ''}</h3>
              {request.body ? (
                // Scrolls on its own when long or wide: a named region that takes the focus, so a keyboard scrolls it.
                <pre
                  class="code-block"
                  role="region"
                  tabIndex={0}
                  aria-label={`Body of request ${request.id}`}
                >
                  <code>{readable(request.body, request.bodyTruncated)}</code>
                </pre>
              ) : (
                <p class="muted">No body.</p>
              )}
            </section>
          </div>
          <EventLinks request={request} connections={connections} />
          <p class="muted">
            Request ID <span class="mono">{request.id}</span>
          </p>
        </div>
      </td>
    </tr>
  );
}

function RequestRow({
  request,
  expanded,
  onToggle,
  connections,
}: {
  request: SourceRequest;
  expanded: boolean;
  onToggle: () => void;
  connections: Connection[];
}) {
  const detailId = `request-${request.id}`;
  return (
    <>
      <tr>
        <td class="disclosure-cell" data-label="Details">
          <button
            type="button"
            class="disclosure"
            aria-expanded={expanded}
            aria-controls={expanded ? detailId : undefined}
            onClick={onToggle}
          >
            <span class="disclosure-icon" aria-hidden="true" />
            <span class="visually-hidden">Show the request of {formatPreciseDate(request.receivedAt)}</span>
          </button>
        </td>
        <th scope="row" class="delivery-time">
          <Time at={request.receivedAt} />
        </th>
        <td data-label="Outcome">
          <OutcomeBadge outcome={request.outcome} />
        </td>
        <td data-label="Event type">
          {request.eventType ? (
            <span class="mono event-type">{breakable(request.eventType)}</span>
          ) : (
            <span class="muted">—</span>
          )}
        </td>
        <td data-label="Provider delivery ID">
          {request.providerDeliveryId ? (
            <span class="mono break">{request.providerDeliveryId}</span>
          ) : (
            <span class="muted">—</span>
          )}
        </td>
        <td data-label="Event">
          {request.eventId ? <span class="mono break">{request.eventId}</span> : <span class="muted">—</span>}
        </td>
      </tr>
      {expanded ? <RequestDetail request={request} id={detailId} connections={connections} /> : null}
    </>
  );
}

function RequestTable({ requests, connections }: { requests: SourceRequest[]; connections: Connection[] }) {
  const [expanded, setExpanded] = useState<Set<string>>(() => new Set());
  const toggle = (id: string) =>
    setExpanded((now) => {
      const next = new Set(now);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  return (
    <div class="table-wrap">
      <table class="deliveries cards-on-phone">
        <caption class="visually-hidden">Requests, newest first</caption>
        <thead>
          <tr>
            <th scope="col">
              <span class="visually-hidden">Details</span>
            </th>
            <th scope="col">Received</th>
            <th scope="col">Outcome</th>
            <th scope="col">Event type</th>
            <th scope="col">Provider delivery ID</th>
            <th scope="col">Event</th>
          </tr>
        </thead>
        <tbody>
          {requests.map((request) => (
            <RequestRow
              key={request.id}
              request={request}
              expanded={expanded.has(request.id)}
              onToggle={() => toggle(request.id)}
              connections={connections}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The outcome filter: applied as it is chosen, kept in the page's URL. */
function OutcomeFilter({ value, onChange }: { value: string; onChange: (outcome: string) => void }) {
  const id = useId();
  return (
    <div class="row">
      <label for={id}>Outcome</label>
      <select
        id={id}
        class="select-inline"
        value={value}
        onChange={(event) => onChange(event.currentTarget.value)}
      >
        <option value="">Every outcome</option>
        {OUTCOMES.map((outcome) => (
          <option key={outcome} value={outcome}>
            {OUTCOME_WORDS[outcome]}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The source's request log, newest first, followed while on screen. */
export function RequestLog({ source }: { source: Source }) {
  const { query, route } = useLocation();
  const titleId = useId();
  const outcome = isOutcome(query.outcome) ? query.outcome : null;
  const cursor = query.cursor || null;
  const log = useResource(
    (signal) =>
      api(routes.sources.requests, { params: { id: source.id }, query: { outcome, cursor }, signal }),
    `${source.id} ${outcome ?? ''} ${cursor ?? ''}`,
  );
  // New requests arrive on the first page; a later page is a fixed slice of the past.
  useFollow({ loading: log.loading || cursor !== null, reload: log.reload });
  // The event links: the connections whose logs the events may be in (the first 100 of them).
  const connections = useResource(
    (signal) => api(routes.connections.list, { query: { limit: 100 }, signal }),
    'connections',
  );
  const requests = log.data?.data ?? [];
  return (
    <section class="stack log-section" aria-labelledby={titleId}>
      <div class="log-toolbar">
        <h2 id={titleId}>Requests</h2>
        <div class="row">
          <OutcomeFilter
            value={outcome ?? ''}
            onChange={(next) => route(sourcePage(source.id, isOutcome(next) ? next : null))}
          />
          <RefreshButton loading={log.loading} onRefresh={log.reload} />
        </div>
      </div>
      <ErrorNotice error={log.error} title="The requests could not be loaded." />
      {!log.data ? (
        log.error ? null : (
          <Loading what="Loading the requests" />
        )
      ) : requests.length === 0 && !cursor ? (
        <EmptyState
          title={outcome ? `No requests ${OUTCOME_WORDS[outcome].toLowerCase()}` : 'No requests yet'}
        >
          <p>
            {outcome
              ? 'None of this source’s requests had that outcome.'
              : 'Nothing has arrived at this source’s ingest URL yet. This list shows each request as it arrives, without a reload.'}
          </p>
        </EmptyState>
      ) : (
        <>
          <p class="muted" aria-live="polite">
            {plural(requests.length, 'request')}
            {log.data.nextCursor ? ' on this page' : ''}, newest first.
          </p>
          <RequestTable requests={requests} connections={connections.data?.data ?? []} />
          <Pager
            cursor={cursor}
            nextCursor={log.data.nextCursor}
            hrefFor={(next) => sourcePage(source.id, outcome, next)}
            label="Pages of requests"
          />
        </>
      )}
    </section>
  );
}
