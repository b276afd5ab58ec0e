// The invitation page (docs/api/people.md): `/invite#token=…`. The token is read from the URL's fragment,
// which no server sees, and sent in request bodies only. The page says whom the invitation is for
// and to which organization, asks for a password, signs the person in, and offers to add a passkey
// (the profile's own "Add a passkey" dialog) before going on.
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api, ApiError, inMinutes } from '../common/api.js';
import { Field, NewPasswordFields, useNewPassword } from '../common/Field.js';
import { formatDate } from '../common/format.js';
import { useAction, useFragmentToken, useResource, useTitle } from '../common/hooks.js';
import { ErrorNotice, Loading, Notice } from '../common/Notice.js';
import { routes, type Invitation, type SignInAnswer } from '../common/routes.js';
import { session, signedIn } from '../common/session.js';
import { passkeysSupported } from '../passkeys/ceremonies.js';
import { PasskeyAddDialog } from '../passkeys/PasskeyAddDialog.js';

/** An invitation refused, in words: a link used, expired or cut short; or too many wrong ones. */
function invitationFailure(error: ApiError): ApiError {
  if (error.code === 'invalid_credentials') {
    return error.saying(
      'This invitation link does not work: it was used already, it has expired (a link lasts 7 days), or it was cut short when copied. Ask whoever invited you for a new link.',
    );
  }
  if (error.code === 'rate_limited') {
    return error.saying(
      `Too many wrong invitation links from this address. Try again in ${inMinutes(error.retryAfterSeconds ?? 900)}.`,
    );
  }
  return error;
}

/** The password form of an invitation: checked on submit, then sent with the token. */
function useAccept(token: string, onSignedIn: (answer: SignInAnswer) => void) {
  const newPassword = useNewPassword();
  const [checked, setChecked] = useState(false);
  const submit = useAction(async () => {
    try {
      onSignedIn(await api(routes.invitations.accept, { body: { token, password: newPassword.password } }));
    } catch (error) {
      throw error instanceof ApiError ? invitationFailure(error) : error;
    }
  });
  const onSubmit = (event: Event) => {
    event.preventDefault();
    setChecked(true);
    if (newPassword.fine) void submit.run();
  };
  return { newPassword, checked, submit, onSubmit };
}

/** Whom the invitation is for, and their new password. */
function AcceptForm({
  token,
  invitation,
  onSignedIn,
}: {
  token: string;
  invitation: Invitation;
  onSignedIn: (answer: SignInAnswer) => void;
}) {
  const form = useAccept(token, onSignedIn);
  const other = session.value?.user.email;
  return (
    <form class="form" noValidate onSubmit={form.onSubmit}>
      <p class="page-description">
        You are invited to <strong>{invitation.tenant.name}</strong> on hubgate. Choose a password to join.
      </p>
      {other && other !== invitation.email ? (
        <Notice tone="warning">
          This browser is signed in as {other}. Joining signs it in as {invitation.email} instead.
        </Notice>
      ) : null}
      {/* The account's name, for the browser's password manager to save the new password with. */}
      <Field label="E-mail address" hint="You sign in with it.">
        {({ id, describedBy }) => (
          <input
            id={id}
            type="email"
            autoComplete="username"
            readOnly
            value={invitation.email}
            aria-describedby={describedBy}
          />
        )}
      </Field>
      <NewPasswordFields state={form.newPassword} checked={form.checked} apiError={form.submit.error} />
      <ErrorNotice error={form.submit.error?.forField('password') ? undefined : form.submit.error} />
      <button
        type="submit"
        class="button button-primary button-block"
        disabled={form.submit.busy}
        aria-busy={form.submit.busy}
      >
        {form.submit.busy ? 'Joining…' : 'Join and sign in'}
      </button>
      <p class="field-hint">This link works once, until {formatDate(invitation.expiresAt)}.</p>
    </form>
  );
}

/** Signed in: a passkey now (the profile's dialog), or straight on to hubgate. */
function Joined({ answer }: { answer: SignInAnswer }) {
  const { route } = useLocation();
  const [adding, setAdding] = useState(false);
  const [added, setAdded] = useState<string | null>(null);
  const supported = passkeysSupported();
  return (
    <>
      <Notice tone="success">
        You are signed in to {answer.tenant.name} as {answer.user.email}.
      </Notice>
      {added ? (
        <Notice tone="success">The passkey “{added}” was added: sign in with it next time.</Notice>
      ) : (
        <p>
          {supported
            ? 'Add a passkey to sign in with your fingerprint, face, screen lock or security key instead of a password. You can also do it later on your profile.'
            : 'This browser cannot create passkeys; you can add one later on your profile from a browser that can.'}
        </p>
      )}
      <div class="row">
        {supported && !added ? (
          <button type="button" class="button" onClick={() => setAdding(true)}>
            Add a passkey
          </button>
        ) : null}
        <button type="button" class="button button-primary" onClick={() => route('/')}>
          Continue to hubgate
        </button>
      </div>
      {adding ? (
        <PasskeyAddDialog onClose={() => setAdding(false)} onAdded={(passkey) => setAdded(passkey.name)} />
      ) : null}
    </>
  );
}

/** What the link says, before the form: nothing to go on, a refusal, or the invitation. */
function InvitationBody({
  token,
  onSignedIn,
}: {
  token: string | null;
  onSignedIn: (a: SignInAnswer) => void;
}) {
  const invitation = useResource(
    (signal) => (token ? api(routes.invitations.lookup, { body: { token }, signal }) : Promise.resolve(null)),
    token ?? '',
  );
  if (!token) {
    return (
      <Notice tone="warning">
        This link is incomplete. Open the whole link from the message you were sent: it ends in{' '}
        <code>#token=</code> and 32 letters and digits.
      </Notice>
    );
  }
  if (invitation.error) return <ErrorNotice error={invitationFailure(invitation.error)} />;
  if (!invitation.data) return <Loading what="Reading the invitation" />;
  return <AcceptForm token={token} invitation={invitation.data} onSignedIn={onSignedIn} />;
}

/** `/invite#token=…`: join the organization that invited you. */
export function InvitePage() {
  useTitle('Join hubgate');
  const token = useFragmentToken();
  const [joined, setJoined] = useState<SignInAnswer | null>(null);
  const signIn = (answer: SignInAnswer) => {
    signedIn(answer);
    // The link is used up: it leaves the address bar (and the tab's history entry).
    window.history.replaceState(null, '', '/invite');
    setJoined(answer);
  };
  return (
    <section class="card card-narrow" aria-labelledby="invite-title">
      <h1 id="invite-title">{joined ? `Welcome to ${joined.tenant.name}` : 'Join hubgate'}</h1>
      {joined ? <Joined answer={joined} /> : <InvitationBody token={token} onSignedIn={signIn} />}
    </section>
  );
}
