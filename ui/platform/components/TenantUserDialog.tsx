import { useState } from 'preact/hooks';
import { Dialog, FormActions } from '../../components/Dialog.js';
import { Field } from '../../components/Field.js';
import { ErrorNotice } from '../../components/Notice.js';
import { TextField } from '../../components/TextField.js';
import { roleName } from '../../format.js';
import { useAction } from '../../hooks.js';
import { platformApi } from '../key.js';
import { ROLES, type Tenant, type User } from './PlatformTypes.js';

const PASSWORD_MIN = 12;
const PASSWORD_MAX = 200;

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
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<string>('MEMBER');
  const [password, setPassword] = useState('');
  const [checked, setChecked] = useState(false);
  const submit = useAction(async () => {
    const user = await platformApi<User>(
      'POST',
      `/api/v1/platform/tenants/${encodeURIComponent(tenant.id)}/users`,
      {
        body: { email: email.trim(), role, password },
      },
    );
    onAdded(user);
  });
  const apiError = submit.error;
  const localEmail =
    checked && !/^[^\s@]+@[^\s@]+$/.test(email.trim())
      ? 'Enter an e-mail address, like name@example.com.'
      : undefined;
  const localPassword =
    checked && (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX)
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

  return (
    <Dialog title={`Add a user to ${tenant.name}`} onClose={onClose}>
      <form
        class="form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          setChecked(true);
          const form = event.currentTarget;
          const emailOk = /^[^\s@]+@[^\s@]+$/.test(email.trim());
          const passwordOk = password.length >= PASSWORD_MIN && password.length <= PASSWORD_MAX;
          if (!emailOk || !passwordOk) {
            form.querySelectorAll('input')[emailOk ? 1 : 0]?.focus();
            return;
          }
          void submit.run();
        }}
      >
        <TextField
          label="E-mail address"
          type="email"
          autoComplete="off"
          required
          value={email}
          onValue={setEmail}
          error={emailError}
        />
        <Field label="Role" error={roleError}>
          {({ id, describedBy, invalid }) => (
            <select
              id={id}
              value={role}
              aria-describedby={describedBy}
              aria-invalid={invalid || undefined}
              onChange={(event) => setRole(event.currentTarget.value)}
            >
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {roleName(r)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <TextField
          label="Password"
          hint={`${PASSWORD_MIN} to ${PASSWORD_MAX} characters. Give it to them privately; they can sign in with it at once.`}
          type="password"
          autoComplete="new-password"
          required
          value={password}
          onValue={setPassword}
          error={passwordError}
        />
        <ErrorNotice error={otherError} />
        <FormActions busy={submit.busy} onCancel={onClose} label="Add user" busyLabel="Adding…" />
      </form>
    </Dialog>
  );
}
