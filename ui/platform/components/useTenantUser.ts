import { useState } from 'preact/hooks';
import { useAction } from '../../hooks.js';
import { platformApi } from '../key.js';
import type { Tenant, User } from './PlatformTypes.js';

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 200;

const looksLikeEmail = (email: string) => /^[^\s@]+@[^\s@]+$/.test(email.trim());
const passwordFits = (password: string) => password.length >= PASSWORD_MIN && password.length <= PASSWORD_MAX;

/** Adding a user to `tenant`: e-mail, role and first password, checked on submit, then sent. */
export function useTenantUser(tenant: Tenant, onAdded: (user: User) => void) {
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

export type TenantUser = ReturnType<typeof useTenantUser>;

/** What is wrong with each field, found before sending (once submitted) or named by the API. */
export function tenantUserErrors({ email, password, checked, submit }: TenantUser) {
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
