import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ApiError, withQuery } from '../api.js';
import type { Connection, Connector, Page } from '../api-types.js';
import { ConnectionRevokeDialog } from '../components/ConnectionRevokeDialog.js';
import { CredentialsDialog } from '../components/CredentialsDialog.js';
import { EmptyState } from '../components/EmptyState.js';
import { Loading } from '../components/Loading.js';
import { ErrorNotice, Notice } from '../components/Notice.js';
import { PageHeader } from '../components/PageHeader.js';
import { Pager } from '../components/Pager.js';
import { StatusBadge } from '../components/StatusBadge.js';
import { Time } from '../components/Time.js';
import { useResource } from '../hooks.js';
import { session } from '../session.js';

const CONNECTIONS = '/api/v1/integrations/connections';

type Open =
  | { kind: 'bind'; connection: Connection; justCreated?: boolean }
  | { kind: 'revoke'; connection: Connection }
  | null;

/** Where a connection delivers, when its config names a URL (webhook, http). */
const destinationOf = (connection: Connection): string | null =>
  typeof connection.config.url === 'string' ? connection.config.url : null;

/** Whether it delivers: only an active connection with credentials does. Revoked says it all. */
function DeliveryState({ connection }: { connection: Connection }) {
  if (connection.status !== 'active') return null;
  if (connection.deliveryEnabled) return <StatusBadge status="delivered" label="Delivery enabled" />;
  return <StatusBadge status="expired" label="Needs credentials" />;
}

function ConnectionRow({
  connection,
  connectorName,
  canOperate,
  onOpen,
}: {
  connection: Connection;
  connectorName: string;
  canOperate: boolean;
  onOpen: (open: Open) => void;
}) {
  const active = connection.status === 'active';
  const destination = destinationOf(connection);
  const name = connection.displayName;
  return (
    <tr>
      <th scope="row" class="connection-name">
        <span>{name}</span>
        {destination ? (
          <span class="connection-destination mono" title={destination}>
            {destination}
          </span>
        ) : null}
      </th>
      <td>{connectorName}</td>
      <td>
        <span class="connection-status">
          <StatusBadge status={connection.status} label={active ? 'Active' : 'Revoked'} />
          <DeliveryState connection={connection} />
        </span>
      </td>
      <td class="connection-created">
        <Time at={connection.createdAt} />
      </td>
      <td class="actions">
        <div class="connection-actions">
          <a class="connection-events-link" href={`/connections/${encodeURIComponent(connection.id)}/events`}>
            Events<span class="visually-hidden"> of {name}</span>
          </a>
          {canOperate && active ? (
            <>
              <button
                type="button"
                class="button button-small"
                onClick={() => onOpen({ kind: 'bind', connection })}
              >
                {connection.credentialsBound ? 'Replace credentials' : 'Bind credentials'}
                <span class="visually-hidden"> of {name}</span>
              </button>
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
      </td>
    </tr>
  );
}

/** The tenant's connections (contract §12): connector, status and delivery, created; bind and revoke. */
export function ConnectionsPage() {
  const { query, route } = useLocation();
  const cursor = query.cursor ?? null;
  const bindId = query.bind;
  const canOperate = session.value?.user.role !== 'MEMBER';
  const [open, setOpen] = useState<Open>(null);
  const [done, setDone] = useState<string | null>(null);
  // What just happened takes the focus: the button that did it may be gone (a revoked row has none).
  const doneNotice = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (done) doneNotice.current?.focus();
  }, [done]);
  const [openError, setOpenError] = useState<ApiError | undefined>(undefined);

  const list = useResource(
    (signal) => api<Page<Connection>>('GET', withQuery(CONNECTIONS, { cursor }), { signal }),
    `connections ${cursor ?? ''}`,
  );
  const catalog = useResource(
    (signal) => api<Page<Connector>>('GET', '/api/v1/integration-hub/connectors', { signal }),
    'catalog',
  );
  const connectors = new Map((catalog.data?.data ?? []).map((c) => [c.connectorKey, c]));
  const connectorName = (key: string) => connectors.get(key)?.name ?? key;

  // Just created (`?bind=<id>`): open its credentials dialog, and take the parameter out of the URL so
  // a reload or the back button does not open it again. Taking it out changes `bindId`: the request
  // is not abandoned for that, only its answer ignored once the page is gone.
  const mounted = useRef(true);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );
  useEffect(() => {
    if (!bindId) return;
    route(withQuery('/connections', { cursor }), true);
    if (!canOperate) return;
    api<Connection>('GET', `${CONNECTIONS}/${encodeURIComponent(bindId)}`)
      .then((connection) => {
        if (mounted.current && connection.status === 'active') {
          setOpen({ kind: 'bind', connection, justCreated: true });
        }
      })
      .catch((error: unknown) => {
        if (mounted.current) setOpenError(error instanceof ApiError ? error : undefined);
      });
  }, [bindId]);

  const openDialog = (next: Open) => {
    setDone(null);
    setOpenError(undefined);
    setOpen(next);
  };
  const close = () => setOpen(null);

  let body;
  if (list.error?.code === 'entitlement_missing') {
    body = (
      <Notice tone="warning">
        Your organization is not entitled to the Integrations module, so it has no connections. Ask your
        platform operator to enable it.
      </Notice>
    );
  } else if (list.error) {
    body = <ErrorNotice error={list.error} title="The connections could not be loaded." />;
  } else if (!list.data) {
    body = <Loading what="Loading the connections" />;
  } else if (list.data.data.length === 0 && !cursor) {
    body = (
      <EmptyState title="No connections yet">
        <p>
          A connection sends your organization’s events to a system you choose: a signed webhook, a Slack
          channel, or any HTTP endpoint.
          {canOperate ? '' : ' An administrator of your organization can create one.'}
        </p>
        {canOperate ? (
          <a class="button button-primary" href="/connections/new">
            Create connection
          </a>
        ) : null}
      </EmptyState>
    );
  } else {
    body = (
      <>
        <div class="table-wrap">
          <table class="connections">
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
              {list.data.data.map((connection) => (
                <ConnectionRow
                  key={connection.id}
                  connection={connection}
                  connectorName={connectorName(connection.connectorKey)}
                  canOperate={canOperate}
                  onOpen={openDialog}
                />
              ))}
            </tbody>
          </table>
        </div>
        <Pager
          cursor={cursor}
          nextCursor={list.data.nextCursor}
          hrefFor={(next) => withQuery('/connections', { cursor: next })}
          label="Pages of connections"
        />
      </>
    );
  }

  return (
    <>
      <PageHeader
        title="Connections"
        description="Where hubgate sends your organization’s events, and whether each can deliver."
        actions={
          // An empty list has its own call to action, in the middle of the page.
          canOperate && !(list.data?.data.length === 0 && !cursor) ? (
            <a class="button button-primary" href="/connections/new">
              Create connection
            </a>
          ) : null
        }
      />
      {done ? (
        <div ref={doneNotice} tabIndex={-1} class="focus-target">
          <Notice tone="success">{done}</Notice>
        </div>
      ) : null}
      <ErrorNotice error={openError} title="The new connection could not be opened." />
      {body}
      {open?.kind === 'bind' && (catalog.data || catalog.error) ? (
        <CredentialsDialog
          connection={open.connection}
          connector={connectors.get(open.connection.connectorKey)}
          justCreated={open.justCreated}
          onBound={(connection, generated) => {
            list.reload();
            if (!generated)
              setDone(`Credentials bound: “${connection.displayName}” delivers events from now on.`);
          }}
          onClose={close}
        />
      ) : null}
      {open?.kind === 'revoke' ? (
        <ConnectionRevokeDialog
          connection={open.connection}
          onRevoked={(connection) => {
            close();
            list.reload();
            setDone(`“${connection.displayName}” was revoked. No event will be sent to it again.`);
          }}
          onClose={close}
        />
      ) : null}
    </>
  );
}
