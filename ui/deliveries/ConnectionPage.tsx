// A connection's page (docs/operators/web-ui.md, docs/api/events.md): what it is and whether it delivers, its
// event log, and for those who may operate it: send a test event, pause and resume, recover, edit, bind.
// An OAuth2 connection's page (no events, no log asked for) is OAuthConnectionView's (ui/connections/).
import { useLocation, useRoute } from 'preact-iso';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';
import { api, type ApiError } from '../common/api.js';
import { plural, Time } from '../common/format.js';
import { FOLLOW_MS, useResource, useTabVisible, type Resource } from '../common/hooks.js';
import { PageHeader } from '../common/Layout.js';
import { DoneNotice, ErrorNotice, Loading, useDoneNotice } from '../common/Notice.js';
import {
  routes,
  type Connection,
  type Connector,
  type PausedReason,
  type ResumeAnswer,
} from '../common/routes.js';
import { mayManage, mayOperate, pageUrl } from '../common/viewer.js';
import { CredentialsDialog } from '../connections/CredentialsDialog.js';
import { destinationOf, type Destination } from '../connections/destination.js';
import { EditDialog } from '../connections/EditDialog.js';
import { isOAuthConnection, OAuthConnectionView } from '../connections/OAuthConnection.js';
import { ConnectionSummary } from '../connections/status.js';
import { ConnectionLog, useDeliveryLog } from './EventLog.js';
import { FilteredOut, useFilteredEvents } from './FilteredOut.js';
import {
  connectionPage,
  countText,
  deliveryPage,
  filtersFrom,
  NO_FILTERS,
  useDeliveryCount,
  type DeliveryCount,
} from './log.js';
import { PauseDialog, RecoverDialog, ResumeDialog } from './OperateDialogs.js';
import { TestEventResult, useTestEvent } from './TestEventResult.js';

/** A dialog the connection's page opens over itself. */
type ConnectionPageDialog = 'edit' | 'pause' | 'resume' | 'recover' | null;

/**
 * What an operator can do with the connection, by its state: send a test (when it delivers), recover
 * failed deliveries (active), pause, edit. A revoked connection offers nothing.
 */
function ConnectionActions({
  connection,
  editable,
  testing,
  onTest,
  onOpen,
}: {
  connection: Connection;
  /** The catalog knows its connector's fields. */
  editable: boolean;
  testing: boolean;
  onTest: () => void;
  onOpen: (dialog: ConnectionPageDialog) => void;
}) {
  if (connection.status === 'disabled') return null;
  const active = connection.status === 'active';
  return (
    <>
      {connection.deliveryEnabled ? (
        <button
          type="button"
          class="button button-primary"
          onClick={onTest}
          disabled={testing}
          aria-busy={testing}
        >
          {testing ? 'Sending test event…' : 'Send test event'}
        </button>
      ) : null}
      {active ? (
        <button type="button" class="button" onClick={() => onOpen('recover')}>
          Recover failed deliveries
        </button>
      ) : null}
      {/* A paused connection's Resume is in its banner, with the reason it was paused. */}
      {active ? (
        <button type="button" class="button" onClick={() => onOpen('pause')}>
          Pause deliveries
        </button>
      ) : null}
      {editable ? (
        <button type="button" class="button" onClick={() => onOpen('edit')}>
          Edit
        </button>
      ) : null}
    </>
  );
}

type Opened = ConnectionPageDialog | 'bind';

const queuedAgain = (n: number, what: string, whats: string) =>
  `${plural(n, what, whats)} ${n === 1 ? 'is' : 'are'} queued again`;

const resumedText = (name: string, { replayed }: ResumeAnswer): string =>
  replayed > 0
    ? `Deliveries to ${name} resumed: ${queuedAgain(replayed, 'skipped delivery', 'skipped deliveries')}, oldest first.`
    : `Deliveries to ${name} resumed: new events are sent again.`;

const recoveredText = (queued: number): string =>
  queued > 0
    ? `${queuedAgain(queued, 'delivery', 'deliveries')} and sent from now on.`
    : 'Nothing was queued: no delivery in that range matches any more.';

/**
 * The connection page's state around its log: the dialog open, what just happened, the test event,
 * and the count of deliveries skipped while paused. Each change loads the connection and the log again.
 */
function useConnectionPage(id: string, connection: Resource<Connection>, reload: () => void) {
  const [open, setOpenState] = useState<Opened>(null);
  const [round, setRound] = useState(0);
  const { done: notice, setDone: setNotice, ref } = useDoneNotice(id);
  const test = useTestEvent(id, reload);
  const current = connection.data;
  const paused = current?.status === 'paused';
  const skipped = useDeliveryCount(id, paused ? { status: 'skipped' } : null, round);

  const setOpen = (next: Opened) => {
    setNotice(null);
    // The resume dialog says how many were skipped: counted again as it opens.
    if (next === 'resume') setRound((n) => n + 1);
    setOpenState(next);
  };
  const changed = (
    text: string,
    tone: 'success' | 'warning' = 'success',
    action?: { label: string; run: () => void },
  ) => {
    setOpenState(null);
    connection.reload();
    reload();
    setNotice({ tone, text, action });
  };
  const name = current ? `“${current.displayName}”` : 'the connection';
  const onPaused = () =>
    changed(`Deliveries to ${name} are paused. Events for it are kept as skipped until you resume.`);
  const onResumed = (answer: ResumeAnswer) => changed(resumedText(name, answer));
  const onRecovered = ({ queued }: { queued: number }) =>
    changed(recoveredText(queued), queued > 0 ? 'success' : 'warning');
  const onSaved = (saved: Connection | null) => {
    if (!saved) return setOpenState(null);
    if (current?.credentialsBound && !saved.credentialsBound) {
      return changed(
        `Saved. The URL’s host changed, so the credentials of “${saved.displayName}” were unbound: nothing is delivered until you bind them again.`,
        'warning',
        { label: 'Bind credentials', run: () => setOpen('bind') },
      );
    }
    changed(`Saved the changes to “${saved.displayName}”.`);
  };
  return {
    open,
    setOpen,
    notice,
    setNotice,
    noticeRef: ref,
    test,
    skipped,
    onPaused,
    onResumed,
    onRecovered,
    onSaved,
  };
}

type ConnectionPage = ReturnType<typeof useConnectionPage>;

/** Why a connection is paused (docs/api/events.md), as the banner and the connections list say it. */
const PAUSED_WORDS: Record<PausedReason, string> = {
  manual: 'paused by hand',
  failing: 'paused automatically after deliveries kept failing',
  gone: 'paused because the receiver answered 410 Gone',
};

/** What to do about it, for each reason, by whom it delivers to (a broker never answers 410 Gone). */
const ADVICE: Record<Destination, Record<PausedReason, string>> = {
  receiver: {
    manual: 'Resume it when the receiver is ready again.',
    failing:
      'Look at the last attempts of a failed delivery to see what the receiver answered, fix the receiver, then resume.',
    gone: 'The receiver said it no longer wants these events. Resume only once it accepts them again.',
  },
  broker: {
    manual: 'Resume it when the broker is ready again.',
    failing:
      'Look at the last attempts of a failed delivery to see why the broker was not reached or did not acknowledge the messages, fix that, then resume.',
    gone: 'The receiver said it no longer wants these events. Resume only once it accepts them again.',
  },
};

/** " on Nov 27, 2026, 7:05 AM (3 minutes ago)". */
function Since({ at }: { at: string }) {
  const recent = Date.now() - new Date(at).getTime() < 60_000;
  return (
    <>
      {' '}
      on <Time at={at} mode="absolute" /> ({recent ? 'just now' : <Time at={at} />})
    </>
  );
}

function SkippedSoFar({ skipped }: { skipped: DeliveryCount | null | undefined }) {
  if (!skipped) return null;
  if (skipped.count === 0) return <> No event has been skipped yet.</>;
  return <> So far {countText(skipped, 'delivery was', 'deliveries were')} skipped.</>;
}

/** The paused connection's banner: why and since when, what happens meanwhile, and what to do. */
function PausedBanner({
  connection,
  to,
  skipped,
  canOperate,
  onResume,
  skippedHref,
  failedHref,
}: {
  connection: Connection;
  to: Destination;
  skipped: DeliveryCount | null | undefined;
  canOperate: boolean;
  onResume: () => void;
  skippedHref: string;
  failedHref: string;
}) {
  const id = useId();
  const reason = connection.pausedReason ?? 'manual';
  return (
    <section class="paused-banner" aria-labelledby={id}>
      <span class="paused-icon" aria-hidden="true" />
      <div class="paused-text">
        <h2 id={id}>Deliveries are paused</h2>
        <p>
          “{connection.displayName}” was {PAUSED_WORDS[reason]}
          {connection.pausedAt ? <Since at={connection.pausedAt} /> : null}. Nothing is sent while it is
          paused: events for it are kept as skipped deliveries.
          <SkippedSoFar skipped={skipped} />
        </p>
        <p class="muted">{ADVICE[to][reason]}</p>
      </div>
      <div class="paused-actions">
        {canOperate ? (
          <button type="button" class="button button-primary" onClick={onResume}>
            Resume deliveries
          </button>
        ) : null}
        {reason === 'manual' ? null : (
          <a class="button" href={failedHref}>
            Show failed deliveries
          </a>
        )}
        {skipped && skipped.count > 0 ? (
          <a class="button" href={skippedHref}>
            Show skipped deliveries
          </a>
        ) : null}
      </div>
    </section>
  );
}

/**
 * Above the log: what just happened, the test event's outcome, why the connection is paused, and what
 * the connection is.
 */
function ConnectionStatusArea({
  page,
  connection,
  connectorName,
  to,
  canOperate,
  detailHref,
}: {
  page: ConnectionPage;
  connection: Connection;
  connectorName: string;
  to: Destination;
  canOperate: boolean;
  detailHref: (deliveryId: string) => string;
}) {
  return (
    <>
      <DoneNotice done={page.notice} noticeRef={page.noticeRef} onDismiss={() => page.setNotice(null)} />
      <TestEventResult state={page.test.state} detailHref={detailHref} onDismiss={page.test.dismiss} />
      {connection.status === 'paused' ? (
        <PausedBanner
          connection={connection}
          to={to}
          skipped={page.skipped.data}
          canOperate={canOperate}
          onResume={() => page.setOpen('resume')}
          skippedHref={connectionPage(connection.id, { ...NO_FILTERS, status: ['skipped'] })}
          failedHref={connectionPage(connection.id, { ...NO_FILTERS, status: ['failed'] })}
        />
      ) : null}
      <ConnectionSummary
        connection={connection}
        connector={connectorName}
        destination={to}
        onBind={mayManage() ? () => page.setOpen('bind') : undefined}
      />
    </>
  );
}

/** The dialog open over the connection's page, if any. */
function ConnectionPageDialogs({
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

/** The event log's page while its connection is not there: missing, failed to load, or loading. */
function ConnectionEventsFallback({ error }: { error: ApiError | undefined }) {
  if (error?.code === 'not_found') {
    return (
      <>
        <PageHeader
          title="Connection not found"
          back={{ href: pageUrl('/connections'), label: 'Connections' }}
        />
        <section class="card card-narrow">
          <p>There is no connection at this address in your organization. It may have been mistyped.</p>
          <a class="button button-primary" href={pageUrl('/connections')}>
            Back to connections
          </a>
        </section>
      </>
    );
  }
  if (error) {
    return (
      <>
        <PageHeader title="Event log" back={{ href: pageUrl('/connections'), label: 'Connections' }} />
        <ErrorNotice error={error} title="The connection could not be loaded." />
      </>
    );
  }
  return (
    <>
      <PageHeader title="Event log" back={{ href: pageUrl('/connections'), label: 'Connections' }} />
      <Loading what="Loading the connection" />
    </>
  );
}

/** What of a connection changes by itself (an automatic pause) and changes the log with it. */
const stateOf = (c: Connection | undefined): string =>
  c ? [c.status, c.pausedReason, c.pausedAt, c.deliveryEnabled, c.credentialsBound].join(' ') : '';

/**
 * The system changes a connection by itself (docs/api/events.md: a 410 or a run of failures pauses it),
 * so the page reads it again every few seconds while its tab is visible: the paused banner, status and
 * buttons follow without a reload. The next read is timed from the end of the last one, so reads never
 * overlap; a hidden tab asks nothing and reads at once when it is shown again. When the connection's
 * state changed, `onChanged` loads what depends on it (the log: pending deliveries became skipped).
 */
function useFollowConnection(connection: Resource<Connection>, onChanged: () => void) {
  const visible = useTabVisible();
  const { loading, reload } = connection;
  useEffect(() => {
    if (loading || !visible) return;
    const timer = setTimeout(reload, FOLLOW_MS);
    return () => clearTimeout(timer);
  }, [loading, visible, reload]);
  const hidden = useRef(false);
  useEffect(() => {
    if (!visible) hidden.current = true;
    else if (hidden.current) {
      hidden.current = false;
      reload();
      onChanged();
    }
  }, [visible]);
  const state = stateOf(connection.data);
  const seen = useRef(state);
  useEffect(() => {
    if (seen.current && state !== seen.current) onChanged();
    seen.current = state;
  }, [state]);
}

const useCatalog = () => useResource((signal) => api(routes.hub.connectors, { signal }), 'catalog');

/** The connection, and its connector in the catalog (undefined until the catalog answers) and its name. */
function useConnectionWithConnector(id: string) {
  const connection = useResource(
    (signal) => api(routes.connections.get, { params: { id }, signal }),
    `connection ${id}`,
  );
  const catalog = useCatalog();
  const key = connection.data?.connectorKey ?? '';
  const connector = catalog.data?.data.find((c) => c.connectorKey === key);
  return { connection, connector, connectorName: connector?.name ?? key, to: destinationOf(connector) };
}

/**
 * A delivering connection's page (docs/operators/web-ui.md, docs/api/events.md): what it is and whether it
 * delivers, its event log with filters kept in the URL, and, for those who may operate it, test, pause and
 * resume, recover, edit.
 */
function DeliveringConnectionPage({
  connection,
  connector,
  connectorName,
  to,
  canOperate,
}: {
  /** Loaded: its data is there. */
  connection: Resource<Connection>;
  connector: Connector | undefined;
  connectorName: string;
  /** Whom it delivers to (destination.ts): the words for its URL, its failures, its pauses. */
  to: Destination;
  canOperate: boolean;
}) {
  const { query } = useLocation();
  const filters = filtersFrom(query);
  const cursor = query.cursor ?? null;
  const id = connection.data?.id ?? '';
  const log = useDeliveryLog(id, filters, cursor);
  const filtered = useFilteredEvents(id);
  const reloadLog = log.log.reload;
  const reloadFiltered = filtered.reload;
  // What a change on this page (an edit of the filter, a test) may change below it.
  const reloadBelow = useCallback(() => {
    reloadLog();
    reloadFiltered();
  }, [reloadLog, reloadFiltered]);
  const page = useConnectionPage(id, connection, reloadBelow);
  useFollowConnection(connection, reloadLog);
  // Refresh reads the connection with its log: its state may have changed by itself meanwhile.
  const refresh = () => {
    connection.reload();
    reloadFiltered();
    log.refresh();
  };
  const current = connection.data;
  if (!current) return null;
  return (
    <>
      <PageHeader
        title={current.displayName}
        description={`${connectorName} connection: every delivery, newest first, with what was sent and what the ${to} answered.`}
        back={{ href: pageUrl('/connections'), label: 'Connections' }}
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
      <ErrorNotice error={connection.error} title="The connection could not be read again." />
      <ConnectionStatusArea
        page={page}
        connection={current}
        connectorName={connectorName}
        to={to}
        canOperate={canOperate}
        detailHref={(deliveryId) => deliveryPage(id, deliveryId)}
      />
      <FilteredOut connection={current} filtered={filtered} />
      <ConnectionLog
        log={{ ...log, refresh }}
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

/**
 * A connection's page, at /connections/:id/events (and /connections/:id): a delivering connection's event
 * log, or an OAuth2 connection's authorization (it receives no events: no log is asked for, no test offered).
 */
export function ConnectionEventsPage() {
  const { params } = useRoute();
  const canOperate = mayOperate();
  const { connection, connector, connectorName, to } = useConnectionWithConnector(params.id ?? '');
  // Once shown, a failed read again keeps the page on screen with a notice (DeliveringConnectionPage).
  if (!connection.data || connection.error?.code === 'not_found')
    return <ConnectionEventsFallback error={connection.error} />;
  if (isOAuthConnection(connection.data)) {
    return <OAuthConnectionView connection={connection} connector={connector} canOperate={canOperate} />;
  }
  return (
    <DeliveringConnectionPage
      connection={connection}
      connector={connector}
      connectorName={connectorName}
      to={to}
      canOperate={canOperate}
    />
  );
}
