import { useState } from 'preact/hooks';
import { Dialog, FormActions } from '../../components/Dialog.js';
import { ErrorNotice } from '../../components/Notice.js';
import { TextField } from '../../components/TextField.js';
import { useAction } from '../../hooks.js';
import { platformApi } from '../key.js';
import type { Tenant } from './PlatformTypes.js';
import { orderedModules, TenantModulePicker } from './TenantModulePicker.js';

const NAME_MAX = 200;

/** A new tenant: its name and the modules it may use. */
export function TenantCreateDialog({
  onClose,
  onCreated,
}: {
  onClose: () => void;
  onCreated: (t: Tenant) => void;
}) {
  const [name, setName] = useState('');
  const [modules, setModules] = useState<Set<string>>(() => new Set());
  const [checked, setChecked] = useState(false);
  const submit = useAction(async () => {
    const tenant = await platformApi<Tenant>('POST', '/api/v1/platform/tenants', {
      body: { name: name.trim(), entitlements: orderedModules(modules) },
    });
    onCreated(tenant);
  });
  const apiError = submit.error;
  const nameError =
    (checked && !name.trim() ? 'Enter the tenant’s name.' : undefined) ??
    (apiError?.forField('name') ? `Use 1 to ${NAME_MAX} characters.` : undefined);
  const modulesError = apiError?.forField('entitlements') ? 'Choose modules from the list.' : undefined;
  const otherError = apiError && apiError.fieldErrors.length === 0 ? apiError : undefined;
  return (
    <Dialog title="Create a tenant" onClose={onClose}>
      <form
        class="form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          setChecked(true);
          if (!name.trim()) {
            event.currentTarget.querySelector('input')?.focus();
            return;
          }
          void submit.run();
        }}
      >
        <TextField
          label="Name"
          hint="The organization, as its people know it."
          type="text"
          autoComplete="off"
          maxLength={NAME_MAX}
          required
          value={name}
          onValue={setName}
          error={nameError}
        />
        <TenantModulePicker selected={modules} onChange={setModules} error={modulesError} />
        <ErrorNotice error={otherError} />
        <FormActions busy={submit.busy} onCancel={onClose} label="Create tenant" busyLabel="Creating…" />
      </form>
    </Dialog>
  );
}
