// Inviting someone (docs/api/people.md): their e-mail address and role, then the invitation link, shown
// once with the guard an API key's secret has; a new link for someone who has not accepted yet; and
// the role picker the invitation and a change of role share.
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { api, ApiError, inMinutes } from '../common/api.js';
import { ConfirmDialog, Dialog, FormActions } from '../common/Dialog.js';
import { looksLikeEmail, TextField } from '../common/Field.js';
import { formatDate, roleName } from '../common/format.js';
import { useAction, useFocusFirstInvalid } from '../common/hooks.js';
import { ErrorNotice } from '../common/Notice.js';
import { routes, type InvitedPerson, type Person, type Role } from '../common/routes.js';
import { SecretStep, useSecretGuard } from '../common/SecretOnce.js';

/** What each role may do, as the people page says it. */
const ROLE_HELP: Record<Role, string> = {
  MEMBER: 'Reads every module your organization is entitled to.',
  EXECUTIVE:
    'Changes connections, manages API keys and people, and reads the audit log: the same rights as a company IT admin, under a title that says who they are.',
  COMPANY_IT_ADMIN: 'Changes connections, manages API keys and people, and reads the audit log.',
  PLATFORM_ADMIN: 'All of that, and runs this hubgate: the operator console, its tenants and alerting.',
};
const ROLE_ORDER: Role[] = ['MEMBER', 'EXECUTIVE', 'COMPANY_IT_ADMIN', 'PLATFORM_ADMIN'];

/** The roles someone with `myRole` may give: only a platform admin makes a platform admin. */
export const rolesFor = (myRole: string): Role[] =>
  ROLE_ORDER.filter((role) => role !== 'PLATFORM_ADMIN' || myRole === 'PLATFORM_ADMIN');

/** A role, chosen among `roles`, each with what it may do. */
export function RoleField({
  value,
  roles,
  onChange,
  error,
}: {
  value: Role;
  roles: Role[];
  onChange: (role: Role) => void;
  error: string | undefined;
}) {
  const id = useId();
  return (
    <fieldset
      class={error ? 'field-invalid' : undefined}
      aria-describedby={error ? `${id}-error` : undefined}
    >
      <legend>Role</legend>
      {roles.map((role) => (
        <div class="check key-choice" key={role}>
          <input
            id={`${id}-${role}`}
            type="radio"
            name={`${id}-role`}
            value={role}
            checked={value === role}
            aria-describedby={`${id}-${role}-help`}
            aria-invalid={error ? true : undefined}
            onChange={() => onChange(role)}
          />
          <div>
            <label for={`${id}-${role}`}>{roleName(role)}</label>
            <p class="key-level-help" id={`${id}-${role}-help`}>
              {ROLE_HELP[role]}
            </p>
          </div>
        </div>
      ))}
      {error ? (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}

/** The link just made for `person`, shown once: who it is for, the link, and what opening it does. */
function InvitationLinkStep({
  person,
  again,
  onClose,
}: {
  person: InvitedPerson;
  /** A new link for someone invited before: their old link no longer works. */
  again?: boolean;
  onClose: () => void;
}) {
  const guard = useSecretGuard(onClose);
  return (
    <Dialog
      title="Send the invitation link"
      wide
      onClose={onClose}
      onCancel={guard.confirming ? guard.goBack : guard.requestClose}
    >
      <SecretStep
        secret={person.invitation.url}
        guard={guard}
        onClose={onClose}
        label="Invitation link"
        advice="Send it to them now, by a channel you trust: hubgate keeps only a hash of it and cannot show it again."
        lost={{
          what: 'link',
          remedy: 'you would make them a new one with “New link” in the list of people.',
        }}
        usage={
          <p class="key-usage">
            They open it, choose a password and are signed in. It works once, until{' '}
            {formatDate(person.invitation.expiresAt)}.
          </p>
        }
      >
        <strong>{person.email}</strong>{' '}
        {again
          ? 'has a new invitation link; the one they had no longer works.'
          : `is invited as ${roleName(person.role)}.`}
      </SecretStep>
    </Dialog>
  );
}

/**
 * A 409 about the organization's pending invitations (it holds the most it may), not about the
 * address: the server's words say what to do (docs/api/people.md).
 */
const isPendingCap = (error: ApiError | undefined): boolean =>
  error?.code === 'conflict' && /pending invitations/.test(error.message);

/** A 429 of the invitation routes: too many links within the hour, in all or for one address. */
const tooManyLinks = (error: ApiError): ApiError =>
  error.saying(
    `Too many invitation links were made within the hour${
      error.retryAfterSeconds === null ? '' : `; try again in ${inMinutes(error.retryAfterSeconds)}`
    }.`,
  );

/**
 * An invitation refused, on the field it is about where it is about one. A `role_forbidden` is about the
 * role field only when a platform admin was asked for by someone who is not one; otherwise it is the
 * inviter's own role, changed since the page opened (demoted): said as that, not as the other.
 */
function inviteErrors(
  error: ApiError | undefined,
  checked: boolean,
  email: string,
  roles: { asked: Role; mine: string },
) {
  const emailError =
    (checked && !looksLikeEmail(email) ? 'Enter an e-mail address like name@example.com.' : undefined) ??
    (error?.code === 'conflict' && !isPendingCap(error)
      ? 'Someone with this e-mail address already has a hubgate account, or you have invited them already.'
      : error?.forField('email')
        ? 'Enter an e-mail address like name@example.com.'
        : undefined);
  const forbidden = error?.code === 'role_forbidden';
  const roleError =
    forbidden && roles.asked === 'PLATFORM_ADMIN' && roles.mine !== 'PLATFORM_ADMIN'
      ? 'Only a platform admin can make someone a platform admin.'
      : undefined;
  const other =
    error && !emailError && !roleError
      ? error.code === 'rate_limited'
        ? tooManyLinks(error)
        : forbidden
          ? error.saying(
              'Your role no longer lets you invite people: it was changed after this page opened. Ask an administrator of your organization.',
            )
          : error
      : undefined;
  return { emailError, roleError, other };
}

/** The invitation form: what is typed, checked on submit, then sent; the invited person once made. */
function useInvite(onInvited: (person: InvitedPerson) => void) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('MEMBER');
  const [checked, setChecked] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const [invited, setInvited] = useState<InvitedPerson | null>(null);
  const form = useFocusFirstInvalid(attempt);
  const submit = useAction(async () => {
    const person = await api(routes.people.invite, { body: { email: email.trim(), role } });
    setInvited(person);
    onInvited(person);
  });
  const onSubmit = async (event: Event) => {
    event.preventDefault();
    setChecked(true);
    if (looksLikeEmail(email)) await submit.run();
    setAttempt((n) => n + 1);
  };
  return { email, setEmail, role, setRole, checked, invited, form, submit, onSubmit };
}

/**
 * "Invite someone": an e-mail address and a role; then the link, shown once, which they open to
 * choose a password. `onInvited` lets the list show them (invited) meanwhile.
 */
export function InviteDialog({
  myRole,
  onInvited,
  onClose,
}: {
  myRole: string;
  onInvited: (person: InvitedPerson) => void;
  onClose: () => void;
}) {
  const invite = useInvite(onInvited);
  const emailInput = useRef<HTMLDivElement>(null);
  useEffect(() => emailInput.current?.querySelector('input')?.focus(), []);
  if (invite.invited) return <InvitationLinkStep person={invite.invited} onClose={onClose} />;
  const { emailError, roleError, other } = inviteErrors(invite.submit.error, invite.checked, invite.email, {
    asked: invite.role,
    mine: myRole,
  });
  return (
    // Escape while the invitation is being made would lose its link: it waits for the answer.
    <Dialog
      title="Invite someone"
      onClose={onClose}
      onCancel={invite.submit.busy ? () => undefined : onClose}
    >
      <form class="form" ref={invite.form} noValidate onSubmit={(event) => void invite.onSubmit(event)}>
        <p class="dialog-lead">
          hubgate makes a link for them, shown to you once. They open it, choose a password and are signed in.
        </p>
        <div ref={emailInput}>
          <TextField
            label="E-mail address"
            hint="They sign in with it."
            error={emailError}
            type="email"
            autoComplete="off"
            maxLength={254}
            required
            value={invite.email}
            onValue={invite.setEmail}
          />
        </div>
        <RoleField value={invite.role} roles={rolesFor(myRole)} onChange={invite.setRole} error={roleError} />
        <ErrorNotice error={other} />
        <FormActions busy={invite.submit.busy} onCancel={onClose} label="Invite" busyLabel="Inviting…" />
      </form>
    </Dialog>
  );
}

/**
 * "New link" for someone who has not accepted yet (their link was lost, or has expired): asked
 * first, since the link they have stops working; then the new one, shown once.
 */
export function NewLinkDialog({
  person,
  onClose,
  onChanged,
}: {
  person: Person;
  onClose: () => void;
  /** The list is out of date (they accepted meanwhile). */
  onChanged: () => void;
}) {
  const [made, setMade] = useState<InvitedPerson | null>(null);
  const renew = useAction(async () => {
    try {
      setMade(await api(routes.people.newInvitation, { params: { id: person.id } }));
    } catch (error) {
      if (error instanceof ApiError && error.code === 'rate_limited') throw tooManyLinks(error);
      if (!(error instanceof ApiError) || error.code !== 'conflict' || isPendingCap(error)) throw error;
      onChanged();
      throw error.saying(
        `${person.email} has accepted their invitation already, or has a hubgate account by now: ` +
          'no new link is needed.',
      );
    }
  });
  if (made) return <InvitationLinkStep person={made} again onClose={onClose} />;
  return (
    <ConfirmDialog
      title={`New invitation link for ${person.email}?`}
      confirmLabel="Make a new link"
      busy={renew.busy}
      onConfirm={() => void renew.run()}
      onClose={onClose}
      error={<ErrorNotice error={renew.error} />}
    >
      <p>
        The link they have now stops working. The new one works once, for 7 days, and is shown to you once.
      </p>
    </ConfirmDialog>
  );
}
