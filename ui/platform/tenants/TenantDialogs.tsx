// The tenants page's dialogs (docs/api/platform.md): create a tenant with its modules, change its modules,
// add a user with a role and a first password.
import { useState } from 'preact/hooks';
import { Dialog, FormActions } from '../../common/Dialog.js';
import { Field, looksLikeEmail, PASSWORD_MAX, PASSWORD_MIN, TextField } from '../../common/Field.js';
import { moduleName, MODULES, roleName, ROLES } from '../../common/format.js';
import { useAction } from '../../common/hooks.js';
import { ErrorNotice } from '../../common/Notice.js';
import { routes, type Role, type Tenant, type User } from '../../common/routes.js';
import { platformApi } from '../key.js';

/** The dialog open over the tenants page, if any. */
export type TenantDialog =
  { kind: 'create' } | { kind: 'entitlements'; tenant: Tenant } | { kind: 'user'; tenant: Tenant } | null;

/** The modules a tenant is entitled to, as checkboxes (docs/api/authentication.md). */
function TenantModulePicker({
  selected,
  onChange,
  error,
}: {
  selected: Set<string>;
  onChange: (next: Set<string>) => void;
  error?: string;
}) {
  return (
    <fieldset class={error ? 'field-invalid' : undefined}>
      <legend>Modules</legend>
      {MODULES.map((module) => (
        <label class="check" key={module}>
          <input
            type="checkbox"
            name="entitlements"
            value={module}
            checked={selected.has(module)}
            onChange={(event) => {
              const next = new Set(selected);
              if (event.currentTarget.checked) next.add(module);
              else next.delete(module);
              onChange(next);
            }}
          />
          {moduleName(module)}
        </label>
      ))}
      {error ? <p class="field-error">{error}</p> : null}
    </fieldset>
  );
}

/** In the order of the catalog, whatever order they were ticked in. */
export const orderedModules = (selected: Set<string>): string[] => MODULES.filter((m) => selected.has(m));

/** A new user's role in the tenant. */
function TenantRoleField({
  value,
  onChange,
  error,
}: {
  value: Role;
  onChange: (role: Role) => void;
  error: string | undefined;
}) {
  return (
    <Field label="Role" error={error}>
      {({ id, describedBy, invalid }) => (
        <select
          id={id}
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          onChange={(event) => onChange(event.currentTarget.value as Role)}
        >
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {roleName(r)}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

const passwordFits = (password: string) => password.length >= PASSWORD_MIN && password.length <= PASSWORD_MAX;

/** Adding a user to `tenant`: e-mail, role and first password, checked on submit, then sent. */
function useTenantUser(tenant: Tenant, onAdded: (user: User) => void) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('MEMBER');
  const [password, setPassword] = useState('');
  const [checked, setChecked] = useState(false);
  const submit = useAction(async () => {
    const user = await platformApi(routes.platform.addUser, {
      params: { id: tenant.id },
      body: { email: email.trim(), role, password },
    });
    onAdded(user);
  });
  const onSubmit = (event: Event & { currentTarget: HTMLFormElement }) => {
    event.preventDefault();
    setChecked(true);
    const form = event.currentTarget;
    const emailOk = looksLikeEmail(email);
    const passwordOk = passwordFits(password);
    if (!emailOk || !passwordOk) {
      form.querySelectorAll('input')[emailOk ? 1 : 0]?.focus();
      return;
    }
    void submit.run();
  };
  return { email, setEmail, role, setRole, password, setPassword, checked, submit, onSubmit };
}

type TenantUser = ReturnType<typeof useTenantUser>;

/** What is wrong with each field, found before sending (once submitted) or named by the API. */
function tenantUserErrors({ email, password, checked, submit }: TenantUser) {
  const apiError = submit.error;
  const localEmail =
    checked && !looksLikeEmail(email) ? 'Enter an e-mail address, like name@example.com.' : undefined;
  const localPassword =
    checked && !passwordFits(password)
      ? `Use ${PASSWORD_MIN} to ${PASSWORD_MAX} characters; this one has ${password.length}.`
      : undefined;
  const emailError =
    localEmail ??
    (apiError?.code === 'conflict' ? 'A user with this e-mail address exists already.' : undefined) ??
    (apiError?.forField('email') ? 'hubgate does not take this as an e-mail address. Check it.' : undefined);
  const passwordError =
    localPassword ??
    (apiError?.forField('password') ? `Use ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.` : undefined);
  const roleError = apiError?.forField('role') ? 'Choose a role from the list.' : undefined;
  const otherError =
    apiError && apiError.fieldErrors.length === 0 && apiError.code !== 'conflict' ? apiError : undefined;
  return { emailError, passwordError, roleError, otherError };
}

/** Adds a person to a tenant with a role and a first password, which they can change later. */
function TenantUserDialog({
  tenant,
  onClose,
  onAdded,
}: {
  tenant: Tenant;
  onClose: () => void;
  onAdded: (user: User) => void;
}) {
  const user = useTenantUser(tenant, onAdded);
  const { emailError, passwordError, roleError, otherError } = tenantUserErrors(user);
  return (
    <Dialog title={`Add a user to ${tenant.name}`} onClose={onClose}>
      <form class="form" noValidate onSubmit={user.onSubmit}>
        <TextField
          label="E-mail address"
          type="email"
          autoComplete="off"
          required
          value={user.email}
          onValue={user.setEmail}
          error={emailError}
        />
        <TenantRoleField value={user.role} onChange={user.setRole} error={roleError} />
        <TextField
          label="Password"
          hint={`${PASSWORD_MIN} to ${PASSWORD_MAX} characters. Give it to them privately; they can sign in with it at once.`}
          type="password"
          autoComplete="new-password"
          required
          value={user.password}
          onValue={user.setPassword}
          error={passwordError}
        />
        <ErrorNotice error={otherError} />
        <FormActions busy={user.submit.busy} onCancel={onClose} label="Add user" busyLabel="Adding…" />
      </form>
    </Dialog>
  );
}

const NAME_MAX = 200;

/** A new tenant: its name and the modules it may use. */
function TenantCreateDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (t: Tenant) => void }) {
  const [name, setName] = useState('');
  const [modules, setModules] = useState<Set<string>>(() => new Set());
  const [checked, setChecked] = useState(false);
  const submit = useAction(async () => {
    const tenant = await platformApi(routes.platform.createTenant, {
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

/** Replaces a tenant's entitlements; taking a module away stops its people and keys using it. */
function TenantEntitlementsDialog({
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
    const saved = await platformApi(routes.platform.setEntitlements, {
      params: { id: tenant.id },
      body: { entitlements: orderedModules(modules) },
    });
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
