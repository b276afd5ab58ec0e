// Usage across tenants in the console (/platform/usage, contract §24): over a range kept in the URL, one
// row per tenant with usage in it, summed from the platform's usage buckets, each linked to its
// tenant's page; `?tenant=` narrows it to one. It follows new usage without a reload.
import { useLocation } from 'preact-iso';
import { useMemo } from 'preact/hooks';
import { withQuery } from '../../common/api.js';
import { useFollow, useResource } from '../../common/hooks.js';
import { PageHeader } from '../../common/Layout.js';
import { EmptyState, ErrorNotice, Loading } from '../../common/Notice.js';
import { routes, type Page, type Tenant, type TenantUsageBucket } from '../../common/routes.js';
import {
  count,
  DEFAULT_RANGE_KEY,
  sumUsage,
  USAGE_COLUMNS,
  USAGE_RANGES,
  usageQuery,
  usageRange,
  type UsageCounts,
  type UsageRange,
} from '../../common/usage.js';
import { platformApi } from '../key.js';

/** The tenants' names, for the rows: every page of the list (a hub has tens of tenants, not thousands). */
async function tenantNames(signal: AbortSignal): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  let cursor: string | null = null;
  for (let page = 0; page < 20; page += 1) {
    const answer: Page<Tenant> = await platformApi(routes.platform.tenants, {
      query: { cursor, limit: 100 },
      signal,
    });
    for (const tenant of answer.data) names.set(tenant.id, tenant.name);
    cursor = answer.nextCursor;
    if (!cursor) break;
  }
  return names;
}

/** One row per tenant: its buckets summed, the busiest tenants first. */
function rowsOf(buckets: TenantUsageBucket[]): Array<{ tenantId: string; total: UsageCounts }> {
  const byTenant = new Map<string, TenantUsageBucket[]>();
  for (const bucket of buckets)
    byTenant.set(bucket.tenantId, [...(byTenant.get(bucket.tenantId) ?? []), bucket]);
  return [...byTenant]
    .map(([tenantId, own]) => ({ tenantId, total: sumUsage(own) }))
    .sort(
      (a, b) => b.total.eventsPublished - a.total.eventsPublished || a.tenantId.localeCompare(b.tenantId),
    );
}

function TenantsUsageTable({
  buckets,
  names,
  range,
}: {
  buckets: TenantUsageBucket[];
  names: Map<string, string> | undefined;
  range: UsageRange;
}) {
  const rows = useMemo(() => rowsOf(buckets), [buckets]);
  if (rows.length === 0) {
    return (
      <EmptyState title="No usage in this range">
        <p>No tenant published, delivered, called or ingested anything in the {range.words.toLowerCase()}.</p>
      </EmptyState>
    );
  }
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label="Usage per tenant">
      <table class="usage-table cards-on-phone">
        <caption class="visually-hidden">
          Usage per tenant, {range.words.toLowerCase()}, the busiest first
        </caption>
        <thead>
          <tr>
            <th scope="col">Tenant</th>
            {USAGE_COLUMNS.map((c) => (
              <th scope="col" class="number" key={c.name}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map(({ tenantId, total }) => (
            <tr key={tenantId}>
              <th scope="row">
                <a href={`/platform/tenants/${encodeURIComponent(tenantId)}`}>
                  <bdi>{names?.get(tenantId) ?? tenantId}</bdi>
                </a>
                {names?.has(tenantId) ? <span class="tenant-id mono">{tenantId}</span> : null}
              </th>
              {USAGE_COLUMNS.map((c) => (
                <td class="number" data-label={c.label} key={c.name}>
                  {count(total[c.name])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Usage per tenant over a range (and, with `?tenant=`, of one tenant). */
export function TenantsUsagePage() {
  const { query, path, route } = useLocation();
  const range = usageRange(query.range);
  const tenantId = query.tenant || undefined;
  const usage = useResource(
    (signal) =>
      platformApi(routes.platform.usage, {
        query: { ...usageQuery(range), ...(tenantId ? { tenantId } : {}) },
        signal,
      }),
    `usage ${range.key} ${tenantId ?? ''}`,
  );
  useFollow(usage);
  const names = useResource(tenantNames, 'names');
  const move = (next: Record<string, string | null>) =>
    route(withQuery(path, { range: query.range, tenant: tenantId, ...next }), true);
  return (
    <>
      <PageHeader
        title="Usage"
        description="What each tenant used over the range: events published, deliveries by outcome, attempts, proxy calls and webhooks ingested. Days and hours are UTC."
      />
      <div class="log-toolbar">
        <label>
          Range{' '}
          <select
            class="select-inline"
            value={range.key}
            onChange={(event) => {
              const key = event.currentTarget.value;
              move({ range: key === DEFAULT_RANGE_KEY ? null : key });
            }}
          >
            {USAGE_RANGES.map((r) => (
              <option key={r.key} value={r.key}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
        {tenantId ? (
          <a href={withQuery(path, { range: query.range })}>
            Show every tenant
            <span class="visually-hidden"> (now only {names.data?.get(tenantId) ?? tenantId})</span>
          </a>
        ) : null}
        <span class="muted">Updated every few seconds while this page is open.</span>
      </div>
      {usage.error && !usage.data ? (
        <ErrorNotice error={usage.error} title="The usage could not be loaded." />
      ) : !usage.data ? (
        <Loading what="Loading the usage" />
      ) : (
        <TenantsUsageTable buckets={usage.data.data} names={names.data} range={range} />
      )}
    </>
  );
}
