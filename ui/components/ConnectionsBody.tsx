import type { Connection, Page } from '../api-types.js';
import { withQuery } from '../api.js';
import type { Resource } from '../hooks.js';
import type { ConnectionDialog } from './ConnectionRowActions.js';
import { ConnectionTable } from './ConnectionTable.js';
import { EmptyState } from './EmptyState.js';
import { Loading } from './Loading.js';
import { ErrorNotice, Notice } from './Notice.js';
import { Pager } from './Pager.js';

/** The connections list: not entitled, failed, loading, empty with a call to action, or a page. */
export function ConnectionsBody({
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
  if (list.error) return <ErrorNotice error={list.error} title="The connections could not be loaded." />;
  if (!list.data) return <Loading what="Loading the connections" />;
  if (list.data.data.length === 0 && !cursor) {
    return (
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
  }
  return (
    <>
      <ConnectionTable
        connections={list.data.data}
        connectorName={connectorName}
        canOperate={canOperate}
        onOpen={onOpen}
      />
      <Pager
        cursor={cursor}
        nextCursor={list.data.nextCursor}
        hrefFor={(next) => withQuery('/connections', { cursor: next })}
        label="Pages of connections"
      />
    </>
  );
}
