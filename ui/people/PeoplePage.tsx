// The tenant's people (docs/api/people.md), for the roles that may manage keys: who may sign in, with what
// role, whether they accepted their invitation, when they last signed in and how many passkeys they
// have; invite, change a role, remove (after a confirmation), a new link for someone still invited.
import type { JSX } from 'preact';
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api, ApiError, withQuery } from '../common/api.js';
import { ConfirmDialog, Dialog, FormActions } from '../common/Dialog.js';
import { roleName, Time } from '../common/format.js';
import { useAction, useResource, type Resource } from '../common/hooks.js';
import { PageHeader } from '../common/Layout.js';
import {
  DoneNotice,
  EmptyState,
  ErrorNotice,
  Loading,
  RoleNotice,
  StatusBadge,
  useDoneNotice,
} from '../common/Notice.js';
import { Pager } from '../common/Pager.js';
import { routes, type Page, type Person, type Role } from '../common/routes.js';
import { canManageKeys, loadSession, session } from '../common/session.js';
import { InviteDialog, NewLinkDialog, RoleField, rolesFor } from './InviteDialog.js';

/** The dialog open over the page, if any. */
type PeopleDialog =
  | { kind: 'invite' }
  | { kind: 'role'; person: Person }
  | { kind: 'remove'; person: Person }
  | { kind: 'link'; person: Person }
  | null;

const MANAGERS = 'a company IT admin, an executive or a platform admin who has accepted their invitation';

/** The 409 of a change that would leave the organization without anyone who can manage it, in words. */
function lastManager(error: ApiError, person: Person, mine: boolean, doing: 'demote' | 'remove'): ApiError {
  if (error.code !== 'conflict') return error;
  const who = mine ? 'You are' : `${person.email} is`;
  const then =
    doing === 'remove'
      ? mine
        ? 'remove yourself'
        : 'remove them'
      : mine
        ? 'change your own role'
        : 'change their role';
  return error.saying(
    `${who} the last person here who can manage keys and people (${MANAGERS}). Make someone else one of those first, then ${then}.`,
  );
}

/** "Change the role of …": the roles you may give, each with what it may do. */
function ChangeRoleDialog({
  person,
  mine,
  myRole,
  onChanged,
  onClose,
}: {
  person: Person;
  mine: boolean;
  myRole: string;
  onChanged: (person: Person) => void;
  onClose: () => void;
}) {
  const [role, setRole] = useState<Role>(person.role);
  const change = useAction(async () => {
    if (role === person.role) return onClose();
    try {
      const changed = await api(routes.people.changeRole, { params: { id: person.id }, body: { role } });
      // Your own role changed: what the pages offer you changes with it.
      if (mine) await loadSession();
      onChanged(changed);
    } catch (error) {
      throw error instanceof ApiError ? lastManager(error, person, mine, 'demote') : error;
    }
  });
  return (
    <Dialog title={`Change the role of ${person.email}`} onClose={onClose}>
      <form
        class="form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void change.run();
        }}
      >
        <RoleField value={role} roles={rolesFor(myRole)} onChange={setRole} error={undefined} />
        <ErrorNotice error={change.error} title="The role was not changed." />
        <FormActions busy={change.busy} onCancel={onClose} label="Change role" busyLabel="Changing…" />
      </form>
    </Dialog>
  );
}

/** "Remove …?": what removing does, said before it is done. */
function RemoveDialog({
  person,
  mine,
  onRemoved,
  onClose,
}: {
  person: Person;
  mine: boolean;
  onRemoved: () => void;
  onClose: () => void;
}) {
  const remove = useAction(async () => {
    try {
      await api(routes.people.remove, { params: { id: person.id } });
    } catch (error) {
      // Removed meanwhile (another tab, another admin): what was wanted is done.
      if (!(error instanceof ApiError) || error.status !== 404)
        throw error instanceof ApiError ? lastManager(error, person, mine, 'remove') : error;
    }
    onRemoved();
  });
  return (
    <ConfirmDialog
      title={`Remove ${person.email}?`}
      confirmLabel="Remove person"
      danger
      busy={remove.busy}
      onConfirm={() => void remove.run()}
      onClose={onClose}
      error={<ErrorNotice error={remove.error} />}
    >
      {mine ? (
        <p>You are removing yourself: you are signed out at once and cannot sign in again.</p>
      ) : person.status === 'invited' ? (
        <p>Their invitation link stops working at once.</p>
      ) : (
        <p>They can no longer sign in, and every session they have ends at once, in every browser.</p>
      )}
      <p>What they did stays in the audit log. To give them access again, invite them again.</p>
    </ConfirmDialog>
  );
}

/** One person: e-mail (and "you"), role, status, last sign-in, passkeys, and what may be done. */
function PersonRow({
  person,
  mine,
  mayChange,
  onOpen,
}: {
  person: Person;
  mine: boolean;
  /** Whether you may change this person (only a platform admin changes a platform admin). */
  mayChange: boolean;
  onOpen: (open: PeopleDialog) => void;
}) {
  const who = person.email;
  return (
    <tr>
      <th scope="row">
        <span class="person-email">{who}</span>
        {mine ? <span class="person-you"> (you)</span> : null}
      </th>
      <td data-label="Role">{roleName(person.role)}</td>
      <td data-label="Status">
        <StatusBadge status={person.status} label={person.status === 'active' ? 'Active' : 'Invited'} />
      </td>
      <td data-label="Last sign-in">
        {person.lastSignInAt ? <Time at={person.lastSignInAt} /> : <span class="muted">Never</span>}
      </td>
      <td data-label="Passkeys">
        {person.passkeys}
        {person.passwordSignIn ? null : <span class="person-note">password sign-in off</span>}
      </td>
      <td class="actions">
        {mayChange ? (
          <>
            {person.status === 'invited' ? (
              <button
                type="button"
                class="button button-small"
                onClick={() => onOpen({ kind: 'link', person })}
              >
                New link<span class="visually-hidden"> for {who}</span>
              </button>
            ) : null}
            <button
              type="button"
              class="button button-small"
              onClick={() => onOpen({ kind: 'role', person })}
            >
              Change role<span class="visually-hidden"> of {who}</span>
            </button>
            <button
              type="button"
              class="button button-small button-danger-quiet"
              onClick={() => onOpen({ kind: 'remove', person })}
            >
              Remove<span class="visually-hidden"> {who}</span>
            </button>
          </>
        ) : null}
      </td>
    </tr>
  );
}

/** The people of one page of the list, newest first; on a phone, one card each. */
function PeopleTable({
  people,
  me,
  onOpen,
}: {
  people: Person[];
  me: { id: string; role: string };
  onOpen: (open: PeopleDialog) => void;
}) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label="People">
      <table class="people-table cards-on-phone">
        <caption class="visually-hidden">People of your organization, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Person</th>
            <th scope="col">Role</th>
            <th scope="col">Status</th>
            <th scope="col">Last sign-in</th>
            <th scope="col">Passkeys</th>
            <th scope="col" class="actions">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {people.map((person) => (
            <PersonRow
              key={person.id}
              person={person}
              mine={person.id === me.id}
              mayChange={person.role !== 'PLATFORM_ADMIN' || me.role === 'PLATFORM_ADMIN'}
              onOpen={onOpen}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The list: not allowed, failed, loading, or a page of people (you are always one of them). */
function PeopleBody({
  allowed,
  people,
  cursor,
  me,
  onOpen,
}: {
  allowed: boolean;
  people: Resource<Page<Person>>;
  cursor: string | null;
  me: { id: string; role: string };
  onOpen: (open: PeopleDialog) => void;
}) {
  if (!allowed || people.error?.code === 'role_forbidden') return <RoleNotice what="manage people" />;
  if (people.error) return <ErrorNotice error={people.error} title="The people could not be loaded." />;
  if (!people.data) return <Loading what="Loading the people" />;
  if (people.data.data.length === 0) return <EmptyState title="Nobody on this page" />;
  return (
    <>
      <PeopleTable people={people.data.data} me={me} onOpen={onOpen} />
      <Pager
        cursor={cursor}
        nextCursor={people.data.nextCursor}
        hrefFor={(next) => withQuery('/people', { cursor: next })}
        label="Pages of people"
      />
    </>
  );
}

/** The dialog open over the page: invite, change a role, remove, a new link. */
function PeopleDialogs({
  open,
  me,
  onChanged,
  onDone,
  onClose,
}: {
  open: PeopleDialog;
  me: { id: string; role: string };
  /** The list is out of date. */
  onChanged: () => void;
  /** What happened, for the page to say once the dialog is gone. */
  onDone: (text: string) => void;
  onClose: () => void;
}) {
  if (!open) return null;
  const finish = (text: string) => {
    onClose();
    onChanged();
    onDone(text);
  };
  if (open.kind === 'invite')
    return <InviteDialog myRole={me.role} onInvited={onChanged} onClose={onClose} />;
  if (open.kind === 'link')
    return <NewLinkDialog person={open.person} onChanged={onChanged} onClose={onClose} />;
  const { person } = open;
  const mine = person.id === me.id;
  if (open.kind === 'role') {
    return (
      <ChangeRoleDialog
        person={person}
        mine={mine}
        myRole={me.role}
        onClose={onClose}
        onChanged={(changed) => finish(`${changed.email} is now ${roleName(changed.role)}.`)}
      />
    );
  }
  return (
    <RemoveDialog
      person={person}
      mine={mine}
      onClose={onClose}
      onRemoved={() => finish(`${person.email} was removed: they can no longer sign in.`)}
    />
  );
}

/** The people of the organization (docs/api/people.md): list, invite, change a role, remove. */
export function PeoplePage() {
  const { query } = useLocation();
  const cursor = query.cursor || null;
  const answer = session.value;
  const allowed = canManageKeys(answer);
  const me = { id: answer?.user.id ?? '', role: answer?.user.role ?? '' };
  const [open, setOpen] = useState<PeopleDialog>(null);
  // What a dialog did lasts while that page of the list is on screen.
  const { done, setDone, ref: doneNotice, dismiss } = useDoneNotice(cursor ?? '');
  const people = useResource(
    (signal) =>
      allowed
        ? api(routes.people.list, { query: { cursor }, signal })
        : Promise.resolve({ data: [], nextCursor: null }),
    `${allowed}:${cursor ?? ''}`,
  );
  const openDialog = (next: PeopleDialog) => {
    setDone(null);
    setOpen(next);
  };
  const inviteButton: JSX.Element = (
    <button type="button" class="button button-primary" onClick={() => openDialog({ kind: 'invite' })}>
      Invite someone
    </button>
  );
  return (
    <>
      <PageHeader
        title="People"
        description="Who in your organization signs in to hubgate, and what each may do."
        actions={allowed ? inviteButton : undefined}
      />
      <DoneNotice done={done} noticeRef={doneNotice} onDismiss={dismiss} />
      <PeopleBody allowed={allowed} people={people} cursor={cursor} me={me} onOpen={openDialog} />
      <PeopleDialogs
        open={open}
        me={me}
        onChanged={people.reload}
        onDone={setDone}
        onClose={() => setOpen(null)}
      />
    </>
  );
}
