// One tenant in the console (/platform/tenants/<id>): its name, ID and modules, its quotas with what
// is in use now (QuotasPanel), and a link to its usage.
import { moduleName, Time } from '../../common/format.js';
import { useResource } from '../../common/hooks.js';
import { PageHeader } from '../../common/Layout.js';
import { ErrorNotice, Loading } from '../../common/Notice.js';
import { routes } from '../../common/routes.js';
import { platformApi } from '../key.js';
import { QuotasPanel } from './QuotasPanel.js';
import { orderedModules } from './TenantDialogs.js';

/** The tenant's page: who it is, its quotas, and where its usage is. */
export function TenantPage({ id }: { id: string }) {
  const tenant = useResource(
    (signal) => platformApi(routes.platform.tenant, { params: { id }, signal }),
    `tenant ${id}`,
  );
  const t = tenant.data;
  return (
    <>
      <PageHeader
        title={t ? t.name : 'Tenant'}
        back={{ href: '/platform/tenants', label: 'Tenants' }}
        description={
          t ? (
            <>
              <span class="mono">{t.id}</span> · created <Time at={t.createdAt} /> ·{' '}
              {t.entitlements.length
                ? orderedModules(new Set(t.entitlements)).map(moduleName).join(', ')
                : 'no modules'}{' '}
              · <a href={`/platform/usage?tenant=${encodeURIComponent(t.id)}`}>See its usage</a>
            </>
          ) : undefined
        }
      />
      {tenant.error ? (
        <ErrorNotice
          error={tenant.error}
          title={
            tenant.error.status === 404
              ? 'There is no tenant with this ID.'
              : 'The tenant could not be loaded.'
          }
        />
      ) : !t ? (
        <Loading what="Loading the tenant" />
      ) : (
        <QuotasPanel tenantId={t.id} />
      )}
    </>
  );
}
