// The connections page (docs/operators/web-ui.md): the list (status and delivery in one column, so it fits
// 1280 px, read again every few seconds while the tab is visible), paging, bind credentials and revoke
// from each row, and the credentials dialog opened right after a connection is created (`?bind=`).
import { useLocation } from 'preact-iso';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, withQuery } from '../common/api.js';
import { Time } from '../common/format.js';
import { useFollow, useResource, type Resource } from '../common/hooks.js';
import { PageHeader } from '../common/Layout.js';
import {
  DoneNotice,
  EmptyState,
  ErrorNotice,
  Loading,
  Notice,
  StatusBadge,
  useDoneNotice,
} from '../common/Notice.js';
import { Pager } from '../common/Pager.js';
import { routes, type Connection, type Connector, type Page } from '../common/routes.js';
import { mayManage, pageUrl } from '../common/viewer.js';
import { CredentialsDialog } from './CredentialsDialog.js';
import { ConnectionRevokeDialog, revokedText } from './RevokeDialog.js';
import { CONNECTION_STATUS_WORDS, ConnectionDeliveryState, isOAuthConnection } from './status.js';

/** A dialog the connections page opens over its list: bind credentials, or revoke. */
type ConnectionDialog =
  | { kind: 'bind'; connection: Connection; justCreated?: boolean }
  | { kind: 'revoke'; connection: Connection }
  | null;

/** A connection's events link and, for those who may operate it until it is revoked, bind and revoke. */
function ConnectionRowActions({
  connection,
  canOperate,
  onOpen,
}: {
  connection: Connection;
  canOperate: boolean;
  onOpen: (open: ConnectionDialog) => void;
}) {
  const name = connection.displayName;
  // An OAuth2 connection has no events and is bound by authorizing, on its page.
  const oauth = isOAuthConnection(connection);
  const page = pageUrl(`/connections/${encodeURIComponent(connection.id)}`);
  return (
    <div class="connection-actions">
      <a class="connection-events-link" href={oauth ? page : `${page}/events`}>
        {oauth ? 'Details' : 'Events'}
        <span class="visually-hidden"> of {name}</span>
      </a>
      {canOperate && connection.status !== 'disabled' ? (
        <>
          {oauth ? null : (
            <button
              type="button"
              class="button button-small"
              onClick={() => onOpen({ kind: 'bind', connection })}
            >
              {connection.credentialsBound ? 'Replace credentials' : 'Bind credentials'}
              <span class="visually-hidden"> of {name}</span>
            </button>
          )}
          <button
            type="button"
            class="button button-small connection-revoke"
            onClick={() => onOpen({ kind: 'revoke', connection })}
          >
            Revoke<span class="visually-hidden"> {name}</span>
          </button>
        </>
      ) : null}
    </div>
  );
}

/** Where a connection delivers, when its config names a URL (webhook, http). */
const destinationOf = (connection: Connection): string | null =>
  typeof connection.config.url === 'string' ? connection.config.url : null;

/** One connection of the list: name and receiver, connector, status and delivery, created, actions. */
function ConnectionRow({
  connection,
  connectorName,
  canOperate,
  onOpen,
}: {
  connection: Connection;
  connectorName: string;
  canOperate: boolean;
  onOpen: (open: ConnectionDialog) => void;
}) {
  const destination = destinationOf(connection);
  return (
    <tr>
      <th scope="row" class="connection-name">
        <span>{connection.displayName}</span>
        {destination ? (
          <span class="connection-destination mono" title={destination}>
            {destination}
          </span>
        ) : null}
      </th>
      <td data-label="Connector">{connectorName}</td>
      <td data-label="Status and delivery">
        <span class="connection-status">
          <StatusBadge status={connection.status} label={CONNECTION_STATUS_WORDS[connection.status]} />
          <ConnectionDeliveryState connection={connection} />
        </span>
      </td>
      <td class="connection-created" data-label="Created">
        <Time at={connection.createdAt} />
      </td>
      <td class="actions">
        <ConnectionRowActions connection={connection} canOperate={canOperate} onOpen={onOpen} />
      </td>
    </tr>
  );
}

/** The connections of one page of the list, newest first. */
function ConnectionTable({
  connections,
  connectorName,
  canOperate,
  onOpen,
}: {
  connections: Connection[];
  connectorName: (key: string) => string;
  canOperate: boolean;
  onOpen: (open: ConnectionDialog) => void;
}) {
  return (
    // On a phone each connection is a card (`cards-on-phone`, styles.css): its actions stay in reach.
    <div class="table-wrap">
      <table class="connections cards-on-phone">
        <caption class="visually-hidden">Connections, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Connector</th>
            <th scope="col">Status and delivery</th>
            <th scope="col">Created</th>
            <th scope="col" class="actions">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {connections.map((connection) => (
            <ConnectionRow
              key={connection.id}
              connection={connection}
              connectorName={connectorName(connection.connectorKey)}
              canOperate={canOperate}
              onOpen={onOpen}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The connections list: not entitled, failed, loading, empty with a call to action, or a page. */
function ConnectionsBody({
  list,
  cursor,
  canOperate,
  connectorName,
  onOpen,
}: {
  list: Resource<Page<Connection>>;
  cursor: string | null;
  canOperate: boolean;
  connectorName: (key: string) => string;
  onOpen: (open: ConnectionDialog) => void;
}) {
  if (list.error?.code === 'entitlement_missing') {
    return (
      <Notice tone="warning">
        Your organization is not entitled to the Integrations module, so it has no connections. Ask your
        platform operator to enable it.
      </Notice>
    );
  }
  if (!list.data) {
    if (list.error) return <ErrorNotice error={list.error} title="The connections could not be loaded." />;
    return <Loading what="Loading the connections" />;
  }
  if (list.data.data.length === 0 && !cursor) {
    return (
      <EmptyState title="No connections yet">
        <p>
          A connection sends your organization’s events to a system you choose: a signed webhook, a Slack
          channel, or any HTTP endpoint.
          {canOperate ? '' : ' An administrator of your organization can create one.'}
        </p>
        {canOperate ? (
          <a class="button button-primary" href={pageUrl('/connections/new')}>
            Create connection
          </a>
        ) : null}
      </EmptyState>
    );
  }
  return (
    <>
      {/* A failed read again keeps the list shown, and says so; the next read may clear it. */}
      <ErrorNotice error={list.error} title="The connections could not be read again." />
      <ConnectionTable
        connections={list.data.data}
        connectorName={connectorName}
        canOperate={canOperate}
        onOpen={onOpen}
      />
      <Pager
        cursor={cursor}
        nextCursor={list.data.nextCursor}
        hrefFor={(next) => withQuery(pageUrl('/connections'), { cursor: next })}
        label="Pages of connections"
      />
    </>
  );
}

/**
 * The dialog open over the connections list, if any: bind credentials (once the catalog answered), or revoke.
 */
function ConnectionDialogs({
  open,
  catalogAnswered,
  connectors,
  onChanged,
  onDone,
  onClose,
}: {
  open: ConnectionDialog;
  catalogAnswered: boolean;
  connectors: Map<string, Connector>;
  /** The list is out of date. */
  onChanged: () => void;
  /** What happened, for the page to say. */
  onDone: (message: string) => void;
  onClose: () => void;
}) {
  return (
    <>
      {open?.kind === 'bind' && catalogAnswered ? (
        <CredentialsDialog
          connection={open.connection}
          connector={connectors.get(open.connection.connectorKey)}
          justCreated={open.justCreated}
          onBound={(connection, generated) => {
            onChanged();
            if (!generated)
              onDone(`Credentials bound: “${connection.displayName}” delivers events from now on.`);
          }}
          onClose={onClose}
        />
      ) : null}
      {open?.kind === 'revoke' ? (
        <ConnectionRevokeDialog
          connection={open.connection}
          onRevoked={(connection) => {
            onClose();
            onChanged();
            onDone(revokedText(connection));
          }}
          onClose={onClose}
        />
      ) : null}
    </>
  );
}

/**
 * Just created (`?bind=<id>`): open its credentials dialog, and take the parameter out of the URL so
 * a reload or the back button does not open it again. Taking it out changes `bindId`: the request
 * is not abandoned for that, only its answer ignored once the page is gone.
 */
function useBindFromUrl(
  bindId: string | undefined,
  cursor: string | null,
  canOperate: boolean,
  open: (dialog: ConnectionDialog) => void,
  fail: (error: ApiError | undefined) => void,
) {
  const { route } = useLocation();
  const mounted = useRef(true);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );
  useEffect(() => {
    if (!bindId) return;
    route(withQuery(pageUrl('/connections'), { cursor }), true);
    if (!canOperate) return;
    api(routes.connections.get, { params: { id: bindId } })
      .then((connection) => {
        if (mounted.current && connection.status !== 'disabled') {
          open({ kind: 'bind', connection, justCreated: true });
        }
      })
      .catch((error: unknown) => {
        if (mounted.current) fail(error instanceof ApiError ? error : undefined);
      });
  }, [bindId]);
}

/**
 * The tenant's connections (docs/operators/web-ui.md): connector, status and delivery, created; bind and
 * revoke.
 */
export function ConnectionsPage() {
  const { query } = useLocation();
  const cursor = query.cursor ?? null;
  const canOperate = mayManage();
  const [open, setOpen] = useState<ConnectionDialog>(null);
  const { done, setDone, ref: doneNotice, dismiss } = useDoneNotice(cursor ?? '');
  const [openError, setOpenError] = useState<ApiError | undefined>(undefined);

  const list = useResource(
    (signal) => api(routes.connections.list, { query: { cursor }, signal }),
    `connections ${cursor ?? ''}`,
  );
  // The system changes connections by itself (an automatic pause), and so do other people, API calls
  // and portal sessions: the list follows them while it is on screen.
  useFollow(list);
  const catalog = useResource((signal) => api(routes.hub.connectors, { signal }), 'catalog');
  const connectors = new Map((catalog.data?.data ?? []).map((c) => [c.connectorKey, c]));
  useBindFromUrl(query.bind, cursor, canOperate, setOpen, setOpenError);

  const openDialog = (next: ConnectionDialog) => {
    setDone(null);
    setOpenError(undefined);
    setOpen(next);
  };
  return (
    <>
      <PageHeader
        title="Connections"
        description="Where hubgate sends your organization’s events, and whether each can deliver."
        actions={
          // An empty list has its own call to action, in the middle of the page.
          canOperate && !(list.data?.data.length === 0 && !cursor) ? (
            <a class="button button-primary" href={pageUrl('/connections/new')}>
              Create connection
            </a>
          ) : null
        }
      />
      <DoneNotice done={done} noticeRef={doneNotice} onDismiss={dismiss} />
      <ErrorNotice error={openError} title="The new connection could not be opened." />
      {query.authorizationError ? (
        // The provider's callback named no connection of yours (docs/api/oauth.md): said here.
        <div class="notice notice-error" role="alert">
          <strong>No connection was authorized. </strong>
          {query.authorizationError}
        </div>
      ) : null}
      <ConnectionsBody
        list={list}
        cursor={cursor}
        canOperate={canOperate}
        connectorName={(key) => connectors.get(key)?.name ?? key}
        onOpen={openDialog}
      />
      <ConnectionDialogs
        open={open}
        catalogAnswered={Boolean(catalog.data || catalog.error)}
        connectors={connectors}
        onChanged={list.reload}
        onDone={setDone}
        onClose={() => setOpen(null)}
      />
    </>
  );
}
