import { useState } from 'preact/hooks';
import { Dialog, FormActions } from '../../components/Dialog.js';
import { ErrorNotice } from '../../components/Notice.js';
import { useAction } from '../../hooks.js';
import { platformApi } from '../key.js';
import type { Tenant } from './PlatformTypes.js';
import { orderedModules, TenantModulePicker } from './TenantModulePicker.js';

/** Replaces a tenant's entitlements; taking a module away stops its people and keys using it. */
export function TenantEntitlementsDialog({
  tenant,
  onClose,
  onSaved,
}: {
  tenant: Tenant;
  onClose: () => void;
  onSaved: (t: Tenant) => void;
}) {
  const [modules, setModules] = useState<Set<string>>(() => new Set(tenant.entitlements));
  const submit = useAction(async () => {
    const saved = await platformApi<Tenant>(
      'PUT',
      `/api/v1/platform/tenants/${encodeURIComponent(tenant.id)}/entitlements`,
      { body: { entitlements: orderedModules(modules) } },
    );
    onSaved(saved);
  });
  const removed = tenant.entitlements.filter((m) => !modules.has(m));
  return (
    <Dialog title={`Entitlements of ${tenant.name}`} onClose={onClose}>
      <form
        class="form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void submit.run();
        }}
      >
        <TenantModulePicker
          selected={modules}
          onChange={setModules}
          error={submit.error?.forField('entitlements') ? 'Choose modules from the list.' : undefined}
        />
        {removed.length ? (
          <p class="notice notice-warning">
            Its people and API keys lose access to what they take away at once; its connections stay.
          </p>
        ) : null}
        <ErrorNotice
          error={submit.error && submit.error.fieldErrors.length === 0 ? submit.error : undefined}
        />
        <FormActions busy={submit.busy} onCancel={onClose} label="Save entitlements" busyLabel="Saving…" />
      </form>
    </Dialog>
  );
}
