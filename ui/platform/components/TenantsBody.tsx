import type { JSX } from 'preact';
import type { Page } from '../../api-types.js';
import { withQuery } from '../../api.js';
import { EmptyState } from '../../components/EmptyState.js';
import { Loading } from '../../components/Loading.js';
import { ErrorNotice } from '../../components/Notice.js';
import { Pager } from '../../components/Pager.js';
import type { Resource } from '../../hooks.js';
import type { Tenant } from './PlatformTypes.js';
import { TenantTable } from './TenantTable.js';

/** The tenants: failed (or a page gone), loading, none yet with a way to start, or a page of them. */
export function TenantsBody({
  tenants,
  cursor,
  createButton,
  onEntitlements,
  onAddUser,
}: {
  tenants: Resource<Page<Tenant>>;
  cursor: string | null;
  createButton: JSX.Element;
  onEntitlements: (tenant: Tenant) => void;
  onAddUser: (tenant: Tenant) => void;
}) {
  if (tenants.error && !tenants.data) {
    return cursor && tenants.error.status === 400 ? (
      <ErrorNotice error={tenants.error} title="This page of the list no longer exists." />
    ) : (
      <ErrorNotice error={tenants.error} title="The tenants could not be loaded." />
    );
  }
  if (!tenants.data) return <Loading what="Loading the tenants" />;
  if (tenants.data.data.length === 0 && !cursor) {
    return (
      <EmptyState title="No tenants yet">
        <p>
          A tenant is an organization using hubgate: its people, keys and connections, apart from every other.
        </p>
        {createButton}
      </EmptyState>
    );
  }
  return (
    <>
      <TenantTable tenants={tenants.data.data} onEntitlements={onEntitlements} onAddUser={onAddUser} />
      <Pager
        cursor={cursor}
        nextCursor={tenants.data.nextCursor}
        hrefFor={(next) => withQuery('/platform/tenants', { cursor: next })}
        label="Pages of tenants"
      />
    </>
  );
}
