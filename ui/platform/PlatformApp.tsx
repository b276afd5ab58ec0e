// The operator console (docs/operators/web-ui.md) at /platform: the key page until a platform key is held,
// then the console's frame and the page its path names. It never waits for a tenant session.
import { useLocation } from 'preact-iso';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../common/api.js';
import { useTitle } from '../common/hooks.js';
import { PageHeader } from '../common/Layout.js';
import { EmptyState, ErrorNotice, Notice } from '../common/Notice.js';
import { routes } from '../common/routes.js';
import { ChannelsPage } from './alerting/ChannelsPage.js';
import { RulesPage } from './alerting/RulesPage.js';
import { keyProblem, looksLikePlatformKey, platformKey, rememberKey } from './key.js';
import { MonitoringPage } from './monitoring/MonitoringPage.js';
import { ProvidersPage } from './oauth/ProvidersPage.js';
import { PlatformBrand, PlatformLayout } from './PlatformLayout.js';
import { TenantPage } from './tenants/TenantPage.js';
import { TenantsPage } from './tenants/TenantsPage.js';
import { TenantsUsagePage } from './tenants/TenantsUsagePage.js';

const REFUSED =
  'hubgate refused that platform key: it was revoked, has expired, or was mistyped. Paste a valid key.';

/** Why a pasted value cannot be a platform key, in words; undefined when it could be one. */
function shapeProblem(value: string): string | undefined {
  if (!value) return 'Paste the platform key.';
  if (/^tnt_/.test(value))
    return 'That is a tenant API key (tnt_…). The console needs a platform key, which starts with plt_.';
  if (!value.startsWith('plt_'))
    return 'A platform key starts with plt_. Paste the whole key as "hubgate platform-key create" printed it.';
  if (/\s/.test(value)) return 'The key contains spaces or line breaks. Paste it again without them.';
  if (!looksLikePlatformKey(value))
    return 'That is not a whole platform key: after plt_ it has 38 letters and digits. Paste it again.';
  return undefined;
}

/**
 * Whether hubgate takes `key` (it is tried against the monitoring snapshot): null when it does, else
 * what to say on the field (refused) or the failure (hubgate did not answer, rate limited …).
 */
async function keyRefusal(key: string): Promise<{ field?: string; failure?: ApiError } | null> {
  try {
    await api(routes.platform.monitoring, { bearer: key });
    return null;
  } catch (error) {
    const refused = error instanceof ApiError && (error.status === 401 || error.code === 'route_not_allowed');
    if (refused) return { field: REFUSED };
    return { failure: error instanceof ApiError ? error : new ApiError(0, 'unknown', String(error)) };
  }
}

/**
 * Signing in to the console with a pasted platform key: its shape checked here, then the key tried
 * against the monitoring route before it is kept.
 */
function usePlatformKeySignIn() {
  const [value, setValue] = useState('');
  const [show, setShow] = useState(false);
  const [fieldError, setFieldError] = useState<string | undefined>(undefined);
  const [failure, setFailure] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  // Taken: the field is emptied, and the console opens.
  const accept = (key: string) => {
    setValue('');
    rememberKey(key);
  };
  const submit = async () => {
    const key = value.trim();
    const wrong = shapeProblem(key);
    setFailure(undefined);
    setFieldError(wrong);
    if (wrong) return input.current?.focus();
    setBusy(true);
    const refusal = await keyRefusal(key);
    setBusy(false);
    if (!refusal) return accept(key);
    setFieldError(refusal.field);
    setFailure(refusal.failure);
    if (refusal.field) input.current?.focus();
  };

  return { value, setValue, show, setShow, fieldError, failure, busy, input, submit };
}

type PlatformKeySignIn = ReturnType<typeof usePlatformKeySignIn>;

/** The platform key's field: a password input unless shown, its hint, and what is wrong with it. */
function PlatformKeyField({ id, state }: { id: string; state: PlatformKeySignIn }) {
  const { fieldError } = state;
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  return (
    <div class={fieldError ? 'field field-invalid' : 'field'}>
      <label for={id}>Platform key</label>
      <input
        id={id}
        ref={state.input}
        // A password field: the key is not shown on screen unless asked. Preact types inputs
        // as a union keyed by `type`; both take the same attributes.
        type={(state.show ? 'text' : 'password') as 'text'}
        name="platform-key"
        autoComplete="off"
        spellcheck={false}
        autoCapitalize="off"
        class="mono"
        value={state.value}
        aria-describedby={fieldError ? `${hintId} ${errorId}` : hintId}
        aria-invalid={fieldError ? true : undefined}
        onInput={(event) => state.setValue(event.currentTarget.value)}
      />
      <p class="field-hint platform-key-hint" id={hintId}>
        Starts with <code>plt_</code>; made with <code>hubgate platform-key create</code>. It is kept in this
        tab only until you sign out or close it.
      </p>
      {fieldError ? (
        <p class="field-error" id={errorId}>
          {fieldError}
        </p>
      ) : null}
    </div>
  );
}

/** The platform key, whether to show it, and Open the console. */
function PlatformKeyForm({ id, state }: { id: string; state: PlatformKeySignIn }) {
  return (
    <form
      class="form"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void state.submit();
      }}
    >
      <PlatformKeyField id={id} state={state} />
      <label class="check">
        <input
          type="checkbox"
          checked={state.show}
          onChange={(event) => state.setShow(event.currentTarget.checked)}
        />
        Show the key
      </label>
      <ErrorNotice error={state.failure} title="The key could not be checked." />
      <button type="submit" class="button button-primary" disabled={state.busy} aria-busy={state.busy}>
        {state.busy ? 'Checking…' : 'Open the console'}
      </button>
    </form>
  );
}

/**
 * The console's way in: a platform key pasted once, checked for its shape, then tried against the
 * monitoring route before it is kept (in this tab's sessionStorage only).
 */
function PlatformKeyPage({ signedOut }: { signedOut: boolean }) {
  useTitle('Operator console');
  const state = usePlatformKeySignIn();
  const id = useId();
  const problem = keyProblem.value;

  useEffect(() => {
    if (!document.activeElement || document.activeElement === document.body)
      document.getElementById('main')?.focus({ preventScroll: true });
  }, []);

  return (
    <main id="main" class="bare" tabIndex={-1}>
      <div class="bare-brand">
        <PlatformBrand />
      </div>
      <section class="card card-narrow" aria-labelledby={`${id}-title`}>
        <h1 id={`${id}-title`}>Operator console</h1>
        <p class="page-description">
          Monitoring, tenants and alerting for the people who run this hubgate. Sign in with a platform key.
        </p>
        {signedOut && !problem ? (
          <Notice tone="success">You have signed out. This tab no longer holds the platform key.</Notice>
        ) : null}
        {problem ? (
          <div class="notice notice-warning" role="alert">
            {problem}
          </div>
        ) : null}
        <PlatformKeyForm id={id} state={state} />
      </section>
    </main>
  );
}

/**
 * Whether a path is the operator console's (docs/operators/web-ui.md): `/platform` and everything under it.
 */
export const isConsolePath = (path: string): boolean => path === '/platform' || path.startsWith('/platform/');

function ConsoleNotFound() {
  return (
    <>
      <PageHeader title="Page not found" />
      <EmptyState title="The console has no page at this address">
        <p>
          <a href="/platform">Go to monitoring</a>
        </p>
      </EmptyState>
    </>
  );
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

function pageFor(path: string) {
  const tenant = /^\/platform\/tenants\/([^/]+)\/?$/.exec(path);
  // A malformed escape is no ID: the API answers 404 for it, and the page says so.
  if (tenant?.[1]) return <TenantPage id={safeDecode(tenant[1])} />;
  switch (path.replace(/\/+$/, '') || '/') {
    case '/platform':
      return <MonitoringPage />;
    case '/platform/tenants':
      return <TenantsPage />;
    case '/platform/usage':
      return <TenantsUsagePage />;
    case '/platform/alerting/channels':
      return <ChannelsPage />;
    case '/platform/alerting/rules':
      return <RulesPage />;
    case '/platform/oauth-providers':
      return <ProvidersPage />;
    default:
      return <ConsoleNotFound />;
  }
}

/**
 * The operator console: a platform key first (kept in this tab only), then its pages in its own
 * frame. It never needs or uses a tenant session.
 */
export function PlatformApp() {
  const { path } = useLocation();
  const [signedOut, setSignedOut] = useState(false);
  if (!platformKey.value) return <PlatformKeyPage signedOut={signedOut} />;
  return <PlatformLayout onSignOut={() => setSignedOut(true)}>{pageFor(path)}</PlatformLayout>;
}
