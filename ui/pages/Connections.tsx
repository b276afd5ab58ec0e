import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import type { Connection, Connector, Page } from '../api-types.js';
import { api, withQuery, type ApiError } from '../api.js';
import { ConnectionDialogs } from '../components/ConnectionDialogs.js';
import type { ConnectionDialog } from '../components/ConnectionRowActions.js';
import { ConnectionsBody } from '../components/ConnectionsBody.js';
import { DoneNotice } from '../components/DoneNotice.js';
import { ErrorNotice } from '../components/Notice.js';
import { PageHeader } from '../components/PageHeader.js';
import { useBindFromUrl } from '../components/useBindFromUrl.js';
import { useDoneNotice } from '../components/useDoneNotice.js';
import { useResource } from '../hooks.js';
import { session } from '../session.js';

const CONNECTIONS = '/api/v1/integrations/connections';

/** The tenant's connections (contract §12): connector, status and delivery, created; bind and revoke. */
export function ConnectionsPage() {
  const { query } = useLocation();
  const cursor = query.cursor ?? null;
  const canOperate = session.value?.user.role !== 'MEMBER';
  const [open, setOpen] = useState<ConnectionDialog>(null);
  const { done, setDone, ref: doneNotice } = useDoneNotice();
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
            <a class="button button-primary" href="/connections/new">
              Create connection
            </a>
          ) : null
        }
      />
      <DoneNotice message={done} noticeRef={doneNotice} />
      <ErrorNotice error={openError} title="The new connection could not be opened." />
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
