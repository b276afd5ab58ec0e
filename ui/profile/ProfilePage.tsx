// The profile (docs/operators/web-ui.md): the signed-in person, their passkeys and password sign-in, and this
// browser's session.
import { moduleName, roleName } from '../common/format.js';
import { PageHeader } from '../common/Layout.js';
import { canManageKeys, session, signOut } from '../common/session.js';
import { PasskeySection } from '../passkeys/PasskeySection.js';

const METHODS: Record<string, string> = {
  password: 'E-mail and password',
  passkey: 'A passkey',
  sso: 'Single sign-on (Kerberos)',
};

/** The signed-in person: who they are, what their role lets them do, how they signed in. */
export function ProfilePage() {
  const answer = session.value;
  if (!answer) return null;
  const { user, tenant } = answer;
  return (
    <>
      <PageHeader title="Profile" description="Your account, how you sign in, and this browser’s session." />
      <section class="card" aria-labelledby="account-title">
        <h2 id="account-title">Account</h2>
        <dl class="details">
          <dt>E-mail address</dt>
          <dd>{user.email}</dd>
          <dt>Role</dt>
          <dd>
            {roleName(user.role)}
            <p class="muted">
              {canManageKeys(answer)
                ? 'Administers every module your organization is entitled to, and manages API keys and people.'
                : 'Reads every module your organization is entitled to.'}
            </p>
          </dd>
          <dt>Organization</dt>
          <dd>{tenant.name}</dd>
          <dt>Modules</dt>
          <dd>
            {tenant.entitlements.length === 0
              ? 'None yet: ask your platform operator.'
              : tenant.entitlements.map(moduleName).join(', ')}
          </dd>
        </dl>
      </section>
      <PasskeySection />
      <section class="card" aria-labelledby="session-title">
        <h2 id="session-title">This session</h2>
        <dl class="details">
          <dt>Signed in with</dt>
          <dd>{METHODS[answer.authMethod] ?? answer.authMethod}</dd>
          <dt>Ends</dt>
          <dd>After 2 hours without activity, and at the latest 12 hours after you signed in.</dd>
        </dl>
        <button type="button" class="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </section>
    </>
  );
}
