// First-run setup (docs/operators/setup.md): the token from the link's fragment, the organization and its
// first administrator, then the platform key shown once, signed in.
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api, ApiError, inMinutes } from '../common/api.js';
import { NewPasswordFields, TextField, useNewPassword } from '../common/Field.js';
import { useAction, useFragmentToken, useResource, useTitle, type Resource } from '../common/hooks.js';
import { ErrorNotice, Loading, Notice } from '../common/Notice.js';
import { routes, type SessionAnswer, type SetupAnswer } from '../common/routes.js';
import { SecretOnce } from '../common/SecretOnce.js';
import { session, signedIn } from '../common/session.js';

/** A refused setup, in words: a wrong or expired link, or too many of them. */
function setupFailure(error: ApiError): ApiError {
  const say = (message: string) =>
    new ApiError(error.status, error.code, message, error.fieldErrors, error.requestId);
  switch (error.code) {
    case 'invalid_credentials':
      return say(
        'This setup link is wrong or has expired. Restart hubgate (npm start) and open the new link it prints.',
      );
    case 'rate_limited':
      return say(
        `Too many wrong setup links from this address. Try again in ${inMinutes(error.retryAfterSeconds ?? 900)}.`,
      );
    default:
      return error;
  }
}

/** The first administrator's form (setup `token`): what is typed, checked on submit, then sent. */
function useFirstAdmin(token: string, onDone: (answer: SetupAnswer) => void) {
  const [organizationName, setOrganizationName] = useState('');
  const [email, setEmail] = useState('');
  const newPassword = useNewPassword();
  const { password } = newPassword;
  const [checked, setChecked] = useState(false);

  const submit = useAction(async () => {
    try {
      onDone(await api(routes.setup.complete, { body: { token, organizationName, email, password } }));
    } catch (error) {
      throw error instanceof ApiError ? setupFailure(error) : error;
    }
  });
  const onSubmit = (event: Event) => {
    event.preventDefault();
    setChecked(true);
    if (!organizationName.trim() || !email || !newPassword.fine) return;
    void submit.run();
  };
  const fields = { organizationName, setOrganizationName, email, setEmail };
  return { ...fields, newPassword, checked, submit, onSubmit };
}

type FirstAdmin = ReturnType<typeof useFirstAdmin>;

/** The organization's name and the first administrator's e-mail address. */
function FirstAdminOrganization({ form }: { form: FirstAdmin }) {
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

/** The organization and its first administrator, with the setup link's `token`. */
function FirstAdminForm({ token, onDone }: { token: string; onDone: (answer: SetupAnswer) => void }) {
  const form = useFirstAdmin(token, onDone);
  const { submit } = form;
  const apiError = submit.error;
  return (
    <form class="form" noValidate onSubmit={form.onSubmit}>
      <FirstAdminOrganization form={form} />
      <NewPasswordFields state={form.newPassword} checked={form.checked} apiError={form.submit.error} />
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

/** The end of setup: the platform key, shown once, and a way on that asks first if it was not copied. */
function PlatformKeyShown({ answer }: { answer: SetupAnswer }) {
  const { route } = useLocation();
  const [copied, setCopied] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const proceed = () => {
    // The token has done its job: it leaves the address bar and the history entry.
    history.replaceState(null, '', '/setup');
    route('/', true);
  };
  return (
    <div class="stack">
      <Notice tone="success">
        <strong>
          <bdi>{answer.tenant.name}</bdi>
        </strong>{' '}
        is set up, and you are signed in as {answer.user.email}.
      </Notice>
      <p>
        hubgate made a <strong>platform key</strong> for you. Operator tools use it to read monitoring and to
        set up tenants and alerting through the platform API.
      </p>
      <SecretOnce label="Platform key" secret={answer.platformKey.secret} onCopied={() => setCopied(true)} />
      {confirming ? (
        <div
          class="confirm-inline"
          role="alertdialog"
          aria-labelledby="setup-leave"
          aria-describedby="setup-leave-detail"
        >
          <p id="setup-leave">
            <strong>You won’t see this key again.</strong>
          </p>
          <p id="setup-leave-detail">You have not copied it. Continue anyway?</p>
          <div class="row">
            <button type="button" class="button" onClick={() => setConfirming(false)}>
              Go back to the key
            </button>
            <button type="button" class="button button-danger" onClick={proceed}>
              Continue without it
            </button>
          </div>
        </div>
      ) : (
        <button
          type="button"
          class="button button-primary button-block"
          onClick={() => (copied ? proceed() : setConfirming(true))}
        >
          Continue to the overview
        </button>
      )}
    </div>
  );
}

/** hubgate is set up already: on to the overview, or to sign in. */
function SetupAlreadyDone({ signedInAs }: { signedInAs: SessionAnswer | null | undefined }) {
  if (signedInAs) {
    return (
      <>
        <p>hubgate is already set up, and you are signed in as {signedInAs.user.email}.</p>
        <a class="button button-primary" href="/">
          Go to the overview
        </a>
      </>
    );
  }
  return (
    <>
      <p>hubgate is already set up.</p>
      <a class="button button-primary" href="/sign-in">
        Sign in
      </a>
    </>
  );
}

/** What the setup page shows: the key once done, else the form, or why there is none. */
function SetupBody({
  done,
  status,
  token,
  onDone,
}: {
  done: SetupAnswer | null;
  status: Resource<{ required: boolean }>;
  token: string | null;
  onDone: (answer: SetupAnswer) => void;
}) {
  if (done) return <PlatformKeyShown answer={done} />;
  if (status.loading && !status.data) return <Loading />;
  if (status.error) return <ErrorNotice error={status.error} />;
  if (!status.data?.required) return <SetupAlreadyDone signedInAs={session.value} />;
  if (!token) {
    return (
      <Notice tone="warning">
        This page needs the link that <code>hubgate serve</code> printed when it started: it ends in{' '}
        <code>/setup#token=…</code>. Restart hubgate to print a new one.
      </Notice>
    );
  }
  return <FirstAdminForm token={token} onDone={onDone} />;
}

/** First-run setup (docs/operators/setup.md): the organization, its first administrator, a platform key. */
export function SetupPage() {
  useTitle('Set up hubgate');
  const token = useFragmentToken();
  const [done, setDone] = useState<SetupAnswer | null>(null);
  const status = useResource((signal) => api(routes.setup.status, { signal }), 'setup');
  return (
    <section class="card card-narrow" aria-labelledby="setup-title">
      <h1 id="setup-title">{done ? 'Save your platform key' : 'Set up hubgate'}</h1>
      {!done && status.data?.required && token ? (
        <p class="page-description">
          Create your organization and its first administrator. This happens once.
        </p>
      ) : null}
      <SetupBody
        done={done}
        status={status}
        token={token}
        onDone={(answer) => {
          signedIn(answer);
          setDone(answer);
        }}
      />
    </section>
  );
}
