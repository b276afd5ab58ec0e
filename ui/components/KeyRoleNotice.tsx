import { roleName } from '../format.js';
import { session } from '../session.js';
import { Notice } from './Notice.js';

/**
 * For a person whose role cannot manage keys (or read the audit log): said in words, instead of a
 * refusal from the API or a page that seems broken.
 */
export function KeyRoleNotice({ what }: { what: string }) {
  const role = session.value?.user.role;
  return (
    <Notice tone="warning">
      <strong>
        Your role{role ? ` (${roleName(role)})` : ''} cannot {what}.
      </strong>{' '}
      A company IT admin, an executive or a platform admin of your organization can.
    </Notice>
  );
}
