import { Time } from '../../components/Time.js';
import { moduleName } from '../../format.js';
import type { Tenant } from './PlatformTypes.js';
import { orderedModules } from './TenantModulePicker.js';

/** The tenants, newest first: name and ID, modules, created, and what can be done to each. */
export function TenantTable({
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
      <table class="tenant-table">
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
                <span class="tenant-name">
                  <bdi>{tenant.name}</bdi>
                </span>
                <span class="tenant-id mono">{tenant.id}</span>
              </th>
              <td>
                {tenant.entitlements.length ? (
                  orderedModules(new Set(tenant.entitlements)).map(moduleName).join(', ')
                ) : (
                  <span class="muted">None</span>
                )}
              </td>
              <td>
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
