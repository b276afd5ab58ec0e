import type { SetupAnswer } from '../api-types.js';
import { FirstAdminOrganization } from './FirstAdminOrganization.js';
import { FirstAdminPassword } from './FirstAdminPassword.js';
import { ErrorNotice } from './Notice.js';
import { useFirstAdmin } from './useFirstAdmin.js';

/** The organization and its first administrator, with the setup link's `token`. */
export function FirstAdminForm({ token, onDone }: { token: string; onDone: (answer: SetupAnswer) => void }) {
  const form = useFirstAdmin(token, onDone);
  const { submit } = form;
  const apiError = submit.error;
  return (
    <form class="form" noValidate onSubmit={form.onSubmit}>
      <FirstAdminOrganization form={form} />
      <FirstAdminPassword form={form} />
      <ErrorNotice error={apiError && apiError.fieldErrors.length === 0 ? apiError : undefined} />
      <button
        type="submit"
        class="button button-primary button-block"
        disabled={submit.busy}
        aria-busy={submit.busy}
      >
        {submit.busy ? 'Setting up…' : 'Create organization and sign in'}
      </button>
    </form>
  );
}
