import { TextField } from './TextField.js';
import type { FirstAdmin } from './useFirstAdmin.js';

/** The organization's name and the first administrator's e-mail address. */
export function FirstAdminOrganization({ form }: { form: FirstAdmin }) {
  const { checked, organizationName, email } = form;
  const apiError = form.submit.error;
  return (
    <>
      <TextField
        label="Organization name"
        hint="Your company or team. It becomes the first tenant, entitled to every module."
        error={
          (checked && !organizationName.trim() ? 'Enter a name.' : undefined) ??
          apiError?.forField('organizationName')
        }
        type="text"
        autoComplete="organization"
        maxLength={200}
        required
        value={organizationName}
        onValue={form.setOrganizationName}
      />
      <TextField
        label="Your e-mail address"
        hint="You sign in with it. You will be the platform administrator."
        error={(checked && !email ? 'Enter an e-mail address.' : undefined) ?? apiError?.forField('email')}
        type="email"
        autoComplete="username"
        maxLength={254}
        required
        value={email}
        onValue={form.setEmail}
      />
    </>
  );
}
