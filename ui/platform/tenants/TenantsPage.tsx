// The console's tenants page (docs/api/platform.md): the list, a page at a time, and what may be done to
// each.
import type { JSX } from 'preact';
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { withQuery } from '../../common/api.js';
import { moduleName, Time } from '../../common/format.js';
import { useResource, type Resource } from '../../common/hooks.js';
import { PageHeader } from '../../common/Layout.js';
import { DoneNotice, EmptyState, ErrorNotice, Loading, useDoneNotice } from '../../common/Notice.js';
import { Pager } from '../../common/Pager.js';
import { routes, type Page, type Tenant } from '../../common/routes.js';
import { platformApi } from '../key.js';
import { orderedModules, TenantDialogs, type TenantDialog } from './TenantDialogs.js';

/** The tenants, newest first: name and ID, modules, created, and what can be done to each. */
function TenantTable({
  tenants,
  onEntitlements,
  onAddUser,
}: {
  tenants: Tenant[];
  onEntitlements: (t: Tenant) => void;
  onAddUser: (t: Tenant) => void;
}) {
  return (
    <div class="table-wrap">
      <table class="tenant-table cards-on-phone">
        <thead>
          <tr>
            <th scope="col">Tenant</th>
            <th scope="col">Modules</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {tenants.map((tenant) => (
            <tr key={tenant.id}>
              <th scope="row">
                <a class="tenant-name" href={`/platform/tenants/${encodeURIComponent(tenant.id)}`}>
                  <bdi>{tenant.name}</bdi>
                </a>
                <span class="tenant-id mono">{tenant.id}</span>
              </th>
              <td data-label="Modules">
                {tenant.entitlements.length ? (
                  orderedModules(new Set(tenant.entitlements)).map(moduleName).join(', ')
                ) : (
                  <span class="muted">None</span>
                )}
              </td>
              <td data-label="Created">
                <Time at={tenant.createdAt} />
              </td>
              <td class="actions">
                <button type="button" class="button button-small" onClick={() => onEntitlements(tenant)}>
                  Entitlements
                </button>
                <button type="button" class="button button-small" onClick={() => onAddUser(tenant)}>
                  Add user
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The tenants: failed (or a page gone), loading, none yet with a way to start, or a page of them. */
function TenantsBody({
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

/** Tenants (docs/api/platform.md): list, create with entitlements, change entitlements, add a user. */
export function TenantsPage() {
  const { query } = useLocation();
  const cursor = query.cursor || null;
  const [open, setOpen] = useState<TenantDialog>(null);
  // After a dialog, the news takes the focus (the button that opened the dialog may have moved);
  // it lasts while that page of the list is on screen.
  const { done: news, setDone: setNews, ref: newsRef, dismiss } = useDoneNotice(cursor ?? '');
  const tenants = useResource(
    (signal) => platformApi(routes.platform.tenants, { query: { cursor }, signal }),
    cursor ?? '',
  );

  const openDialog = (next: TenantDialog) => {
    setNews(null);
    setOpen(next);
  };
  const done = (message: string) => {
    setOpen(null);
    setNews(message);
    tenants.reload();
  };
  const createButton = (
    <button type="button" class="button button-primary" onClick={() => openDialog({ kind: 'create' })}>
      Create tenant
    </button>
  );
  const listed = tenants.data && (tenants.data.data.length > 0 || cursor);
  return (
    <>
      <PageHeader
        title="Tenants"
        description="The organizations on this hubgate, the modules each may use, and their people. Open one for its quotas."
        actions={listed ? createButton : undefined}
      />
      <DoneNotice done={news} noticeRef={newsRef} onDismiss={dismiss} />
      <TenantsBody
        tenants={tenants}
        cursor={cursor}
        createButton={createButton}
        onEntitlements={(tenant) => openDialog({ kind: 'entitlements', tenant })}
        onAddUser={(tenant) => openDialog({ kind: 'user', tenant })}
      />
      <TenantDialogs open={open} onDone={done} onClose={() => setOpen(null)} />
    </>
  );
}
