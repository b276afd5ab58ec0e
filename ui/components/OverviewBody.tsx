import type { Resource } from '../hooks.js';
import { EmptyState } from './EmptyState.js';
import { Loading } from './Loading.js';
import { ErrorNotice, Notice } from './Notice.js';
import { OverviewConnectors, type Hub } from './OverviewConnectors.js';
import { OverviewDeliveries } from './OverviewDeliveries.js';
import { OverviewModules } from './OverviewModules.js';
import { OverviewStatusCard } from './OverviewStatusCard.js';

/** The overview of the organization `tenant`: not entitled, failed, loading, or its cards. */
export function OverviewBody({ hub, tenant }: { hub: Resource<Hub>; tenant: string }) {
  if (hub.error?.code === 'entitlement_missing') {
    return (
      <Notice tone="warning">
        <bdi>{tenant}</bdi> is not entitled to the Integration hub module, so there is no overview to show.
        Ask your platform operator to enable it.
      </Notice>
    );
  }
  if (hub.error) return <ErrorNotice error={hub.error} />;
  if (!hub.data) return <Loading what="Loading the overview" />;
  const { overview } = hub.data;
  return (
    <>
      {overview.totals.connections === 0 ? (
        <EmptyState title="No connections yet">
          <p>
            A connection sends <bdi>{tenant}</bdi>’s events to a system you choose: a webhook endpoint, Slack,
            or any HTTP endpoint.
          </p>
          <a class="button button-primary" href="/connections/new">
            Create your first connection
          </a>
        </EmptyState>
      ) : null}
      <div class="grid-2">
        <OverviewStatusCard overview={overview} />
        <OverviewDeliveries overview={overview} />
      </div>
      <OverviewConnectors hub={hub.data} />
      <OverviewModules overview={overview} />
    </>
  );
}
