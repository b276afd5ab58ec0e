import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import type { Page } from '../../api-types.js';
import { withQuery } from '../../api.js';
import { Notice } from '../../components/Notice.js';
import { PageHeader } from '../../components/PageHeader.js';
import { useResource } from '../../hooks.js';
import type { Tenant } from '../components/PlatformTypes.js';
import type { TenantDialog } from '../components/tenantDialog.js';
import { TenantDialogs } from '../components/TenantDialogs.js';
import { TenantsBody } from '../components/TenantsBody.js';
import { platformApi } from '../key.js';

/** Tenants (contract §9): list, create with entitlements, change entitlements, add a user. */
export function TenantsPage() {
  const { query } = useLocation();
  const cursor = query.cursor || null;
  const [open, setOpen] = useState<TenantDialog>(null);
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
        description="The organizations on this hubgate, the modules each may use, and their people."
        actions={listed ? createButton : undefined}
      />
      {news ? (
        <div id="tenant-news" class="focus-target" tabIndex={-1}>
          <Notice tone="success">{news}</Notice>
        </div>
      ) : null}
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
