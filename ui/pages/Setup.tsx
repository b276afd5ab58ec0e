import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, ApiError, inMinutes } from '../api.js';
import type { SetupAnswer } from '../api-types.js';
import { TextField } from '../components/TextField.js';
import { Loading } from '../components/Loading.js';
import { ErrorNotice, Notice } from '../components/Notice.js';
import { SecretOnce } from '../components/SecretOnce.js';
import { useAction, useResource, useTitle } from '../hooks.js';
import { session, signedIn } from '../session.js';

const MIN_PASSWORD = 12;

/** The one-time token from `#token=…`: the fragment never reaches a server or a log. */
function tokenFromFragment(): string | null {
  const match = /(?:^#|&)token=([A-Za-z0-9]+)/.exec(window.location.hash);
  return match?.[1] ?? null;
}

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

function FirstAdminForm({ token, onDone }: { token: string; onDone: (answer: SetupAnswer) => void }) {
  const [organizationName, setOrganizationName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [checked, setChecked] = useState(false);

  const tooShort = password.length < MIN_PASSWORD;
  const mismatch = repeat !== password;
  const submit = useAction(async () => {
    try {
      onDone(
        await api<SetupAnswer>('POST', '/api/v1/setup', {
          body: { token, organizationName, email, password },
          anonymous: true,
        }),
      );
    } catch (error) {
      throw error instanceof ApiError ? setupFailure(error) : error;
    }
  });
  const apiError = submit.error;

  return (
    <form
      class="form"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        setChecked(true);
        if (!organizationName.trim() || !email || tooShort || mismatch) return;
        void submit.run();
      }}
    >
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
        onValue={setOrganizationName}
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
        onValue={setEmail}
      />
      <TextField
        label="Password"
        hint={`At least ${MIN_PASSWORD} characters. A passphrase of a few words is easy to type and hard to guess.`}
        error={
          (checked && tooShort ? `Use at least ${MIN_PASSWORD} characters.` : undefined) ??
          apiError?.forField('password')
        }
        type="password"
        autoComplete="new-password"
        minLength={MIN_PASSWORD}
        maxLength={200}
        required
        value={password}
        onValue={setPassword}
      />
      <TextField
        label="Repeat the password"
        error={checked && mismatch ? 'The two passwords differ.' : undefined}
        type="password"
        autoComplete="new-password"
        maxLength={200}
        required
        value={repeat}
        onValue={setRepeat}
      />
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

/** First-run setup (contract §13): the organization, its first administrator, a platform key. */
export function SetupPage() {
  useTitle('Set up hubgate');
  const [token, setToken] = useState(tokenFromFragment);
  // A link pasted into this tab changes only the fragment: no page load reads it.
  useEffect(() => {
    const read = () => setToken(tokenFromFragment());
    window.addEventListener('hashchange', read);
    return () => window.removeEventListener('hashchange', read);
  }, []);
  const [done, setDone] = useState<SetupAnswer | null>(null);
  const status = useResource(
    (signal) => api<{ required: boolean }>('GET', '/api/v1/setup', { signal, anonymous: true }),
    'setup',
  );

  let body;
  if (done) body = <PlatformKeyShown answer={done} />;
  else if (status.loading && !status.data) body = <Loading />;
  else if (status.error) body = <ErrorNotice error={status.error} />;
  else if (!status.data?.required)
    body = session.value ? (
      <>
        <p>hubgate is already set up, and you are signed in as {session.value.user.email}.</p>
        <a class="button button-primary" href="/">
          Go to the overview
        </a>
      </>
    ) : (
      <>
        <p>hubgate is already set up.</p>
        <a class="button button-primary" href="/sign-in">
          Sign in
        </a>
      </>
    );
  else if (!token)
    body = (
      <Notice tone="warning">
        This page needs the link that <code>hubgate serve</code> printed when it started: it ends in{' '}
        <code>/setup#token=…</code>. Restart hubgate to print a new one.
      </Notice>
    );
  else
    body = (
      <FirstAdminForm
        token={token}
        onDone={(answer) => {
          signedIn(answer);
          setDone(answer);
        }}
      />
    );

  return (
    <section class="card card-narrow" aria-labelledby="setup-title">
      <h1 id="setup-title">{done ? 'Save your platform key' : 'Set up hubgate'}</h1>
      {!done && status.data?.required && token ? (
        <p class="page-description">
          Create your organization and its first administrator. This happens once.
        </p>
      ) : null}
      {body}
    </section>
  );
}
