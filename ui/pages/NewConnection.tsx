import { useLocation } from 'preact-iso';
import type { Connector, Page } from '../api-types.js';
import { api } from '../api.js';
import { Loading } from '../components/Loading.js';
import { NewConnectionForm } from '../components/NewConnectionForm.js';
import { ErrorNotice, Notice } from '../components/Notice.js';
import { PageHeader } from '../components/PageHeader.js';
import { useNewConnection } from '../components/useNewConnection.js';
import { useResource } from '../hooks.js';
import { session } from '../session.js';

const CATALOG = '/api/v1/integration-hub/connectors';

/** Create a connection (contract §12): the chosen connector's fields, errors shown on each field. */
export function NewConnectionPage() {
  const { query } = useLocation();
  const readOnly = session.value?.user.role === 'MEMBER';
  const catalog = useResource((signal) => api<Page<Connector>>('GET', CATALOG, { signal }), 'catalog');
  const connectors = catalog.data?.data ?? [];
  const chosen = connectors.find((c) => c.connectorKey === query.connector && c.enabled);
  const state = useNewConnection(chosen);

  let body;
  if (readOnly) {
    body = (
      <Notice tone="warning">
        Your role can see connections but not create them. Ask an administrator of your organization.
      </Notice>
    );
  } else if (catalog.error) {
    body = <ErrorNotice error={catalog.error} title="The connector catalog could not be loaded." />;
  } else if (!catalog.data) {
    body = <Loading what="Loading the connectors" />;
  } else {
    body = <NewConnectionForm connectors={connectors} chosen={chosen} state={state} />;
  }
  return (
    <>
      <PageHeader
        title="Create a connection"
        description="A connection sends your organization’s events to a system you choose."
        back={{ href: '/connections', label: 'Connections' }}
      />
      {body}
    </>
  );
}
