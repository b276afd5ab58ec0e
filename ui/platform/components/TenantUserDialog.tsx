import { Dialog, FormActions } from '../../components/Dialog.js';
import { ErrorNotice } from '../../components/Notice.js';
import { TextField } from '../../components/TextField.js';
import type { Tenant, User } from './PlatformTypes.js';
import { TenantRoleField } from './TenantRoleField.js';
import { PASSWORD_MAX, PASSWORD_MIN, tenantUserErrors, useTenantUser } from './useTenantUser.js';

/** Adds a person to a tenant with a role and a first password, which they can change later. */
export function TenantUserDialog({
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
