import type { Overview, Readiness } from '../api-types.js';
import { api } from '../api.js';
import { OverviewBody } from '../components/OverviewBody.js';
import { PageHeader } from '../components/PageHeader.js';
import { RefreshButton } from '../components/RefreshButton.js';
import { useResource } from '../hooks.js';
import { session } from '../session.js';

/** The hub overview (contract §12): status, modules, connectors, the last 24 hours of deliveries. */
export function OverviewPage() {
  const tenant = session.value?.tenant.name ?? '';
  const hub = useResource(async (signal) => {
    const [overview, readiness] = await Promise.all([
      api<Overview>('GET', '/api/v1/integration-hub/overview', { signal }),
      api<Readiness>('GET', '/api/v1/integration-hub/credential-readiness', { signal }),
    ]);
    return { overview, readiness };
  }, 'hub');
  return (
    <>
      <PageHeader
        title="Overview"
        description={
          <>
            How <bdi>{tenant}</bdi>’s integrations are doing.
          </>
        }
        actions={<RefreshButton loading={hub.loading} onRefresh={hub.reload} />}
      />
      <OverviewBody hub={hub} tenant={tenant} />
    </>
  );
}
