import { moduleName, roleName } from '../../format.js';
import type { Tenant } from './PlatformTypes.js';
import { TenantCreateDialog } from './TenantCreateDialog.js';
import type { TenantDialog } from './tenantDialog.js';
import { TenantEntitlementsDialog } from './TenantEntitlementsDialog.js';
import { orderedModules } from './TenantModulePicker.js';
import { TenantUserDialog } from './TenantUserDialog.js';

/** The modules in the catalog's order (the API answers them sorted by key), in words. */
const modulesIn = (t: Tenant) => {
  const modules = orderedModules(new Set(t.entitlements));
  return modules.length ? modules.map(moduleName).join(' and ') : 'no module';
};

/** The dialog open over the tenants page, if any: create a tenant, its entitlements, add a user. */
export function TenantDialogs({
  open,
  onDone,
  onClose,
}: {
  open: TenantDialog;
  /** Done: what happened, for the page to say. */
  onDone: (message: string) => void;
  onClose: () => void;
}) {
  return (
    <>
      {open?.kind === 'create' ? (
        <TenantCreateDialog
          onClose={onClose}
          onCreated={(t) => onDone(`Tenant “${t.name}” was created with ${modulesIn(t)}.`)}
        />
      ) : null}
      {open?.kind === 'entitlements' ? (
        <TenantEntitlementsDialog
          tenant={open.tenant}
          onClose={onClose}
          onSaved={(t) => onDone(`“${t.name}” is now entitled to ${modulesIn(t)}.`)}
        />
      ) : null}
      {open?.kind === 'user' ? (
        <TenantUserDialog
          tenant={open.tenant}
          onClose={onClose}
          onAdded={(u) => onDone(`${u.email} was added to “${open.tenant.name}” as ${roleName(u.role)}.`)}
        />
      ) : null}
    </>
  );
}
