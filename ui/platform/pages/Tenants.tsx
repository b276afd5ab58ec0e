import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { withQuery } from '../../api.js';
import type { Page } from '../../api-types.js';
import { EmptyState } from '../../components/EmptyState.js';
import { Loading } from '../../components/Loading.js';
import { ErrorNotice, Notice } from '../../components/Notice.js';
import { PageHeader } from '../../components/PageHeader.js';
import { Pager } from '../../components/Pager.js';
import { moduleName, roleName } from '../../format.js';
import { useResource } from '../../hooks.js';
import { platformApi } from '../key.js';
import type { Tenant } from '../components/PlatformTypes.js';
import { orderedModules } from '../components/TenantModulePicker.js';
import { TenantCreateDialog } from '../components/TenantCreateDialog.js';
import { TenantEntitlementsDialog } from '../components/TenantEntitlementsDialog.js';
import { TenantTable } from '../components/TenantTable.js';
import { TenantUserDialog } from '../components/TenantUserDialog.js';

type Open =
  { kind: 'create' } | { kind: 'entitlements'; tenant: Tenant } | { kind: 'user'; tenant: Tenant } | null;

/** The modules in the catalog's order (the API answers them sorted by key), in words. */
const modulesIn = (t: Tenant) => {
  const modules = orderedModules(new Set(t.entitlements));
  return modules.length ? modules.map(moduleName).join(' and ') : 'no module';
};

/** Tenants (contract §9): list, create with entitlements, change entitlements, add a user. */
export function TenantsPage() {
  const { query } = useLocation();
  const cursor = query.cursor || null;
  const [open, setOpen] = useState<Open>(null);
  const [news, setNews] = useState<string | null>(null);
  const tenants = useResource(
    (signal) =>
      platformApi<Page<Tenant>>('GET', withQuery('/api/v1/platform/tenants', { cursor }), { signal }),
    cursor ?? '',
  );

  // After a dialog, the news takes the focus (the button that opened the dialog may have moved).
  useEffect(() => {
    if (news) document.getElementById('tenant-news')?.focus();
  }, [news]);

  const close = () => setOpen(null);
  const done = (message: string) => {
    setOpen(null);
    setNews(message);
    tenants.reload();
  };
  const createButton = (
    <button
      type="button"
      class="button button-primary"
      onClick={() => {
        setNews(null);
        setOpen({ kind: 'create' });
      }}
    >
      Create tenant
    </button>
  );

  let body;
  if (tenants.error && !tenants.data) {
    body =
      cursor && tenants.error.status === 400 ? (
        <ErrorNotice error={tenants.error} title="This page of the list no longer exists." />
      ) : (
        <ErrorNotice error={tenants.error} title="The tenants could not be loaded." />
      );
  } else if (!tenants.data) body = <Loading what="Loading the tenants" />;
  else if (tenants.data.data.length === 0 && !cursor) {
    body = (
      <EmptyState title="No tenants yet">
        <p>
          A tenant is an organization using hubgate: its people, keys and connections, apart from every other.
        </p>
        {createButton}
      </EmptyState>
    );
  } else {
    body = (
      <>
        <TenantTable
          tenants={tenants.data.data}
          onEntitlements={(tenant) => {
            setNews(null);
            setOpen({ kind: 'entitlements', tenant });
          }}
          onAddUser={(tenant) => {
            setNews(null);
            setOpen({ kind: 'user', tenant });
          }}
        />
        <Pager
          cursor={cursor}
          nextCursor={tenants.data.nextCursor}
          hrefFor={(next) => withQuery('/platform/tenants', { cursor: next })}
          label="Pages of tenants"
        />
      </>
    );
  }

  const listed = tenants.data && (tenants.data.data.length > 0 || cursor);
  return (
    <>
      <PageHeader
        title="Tenants"
        description="The organizations on this hubgate, the modules each may use, and their people."
        actions={listed ? createButton : undefined}
      />
      {news ? (
        <div id="tenant-news" class="focus-target" tabIndex={-1}>
          <Notice tone="success">{news}</Notice>
        </div>
      ) : null}
      {body}
      {open?.kind === 'create' ? (
        <TenantCreateDialog
          onClose={close}
          onCreated={(t) => done(`Tenant “${t.name}” was created with ${modulesIn(t)}.`)}
        />
      ) : null}
      {open?.kind === 'entitlements' ? (
        <TenantEntitlementsDialog
          tenant={open.tenant}
          onClose={close}
          onSaved={(t) => done(`“${t.name}” is now entitled to ${modulesIn(t)}.`)}
        />
      ) : null}
      {open?.kind === 'user' ? (
        <TenantUserDialog
          tenant={open.tenant}
          onClose={close}
          onAdded={(u) => done(`${u.email} was added to “${open.tenant.name}” as ${roleName(u.role)}.`)}
        />
      ) : null}
    </>
  );
}
