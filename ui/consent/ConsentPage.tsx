// The consent page of MCP clients that sign in with OAuth (docs/api/mcp.md): an application (a desktop
// agent) asks for access to the organization through hubgate's MCP server; a person who manages API
// keys sees who asks (a name the application chose itself), where the browser returns, which
// organization and which scopes, and approves some of the scopes or denies. Either answer sends the
// browser back to the application.
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../common/api.js';
import { roleName, scopeName } from '../common/format.js';
import { useAction, useResource, useTitle } from '../common/hooks.js';
import { ErrorNotice, Loading, Notice } from '../common/Notice.js';
import { routes, type ConsentView } from '../common/routes.js';
import { canManageKeys, session } from '../common/session.js';

/**
 * What each scope lets the application do through the MCP server: its tools (docs/api/mcp.md), not the
 * whole API a key of that scope reaches, since these tokens open the MCP route only.
 */
const SCOPE_HELP: Record<string, string> = {
  'integration_hub:READER': 'Read the hub overview and whether credentials are ready.',
  'integrations:READER': 'Read connections, their event logs and the event types.',
  'integrations:OPERATOR':
    'Also publish events, send test events, pause and resume connections, retry deliveries and call a connection’s API through hubgate.',
};

const EXPIRED = 'This request expired, or it was answered already. Start again from the application.';

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Where the browser goes after the answer: a host, and whether it is this computer. */
function returnPlace(redirectUri: string): { host: string; local: boolean } {
  try {
    const url = new URL(redirectUri);
    return { host: url.host, local: LOOPBACK.has(url.hostname) };
  } catch {
    return { host: redirectUri, local: false };
  }
}

/** A refusal of the page as a whole: a heading that says it, and what to do. */
function Refusal({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section class="card card-narrow consent-card" aria-labelledby="consent-title">
      <h1 id="consent-title">{title}</h1>
      {children}
    </section>
  );
}

/** Only the key-managing roles may approve: a grant reaches as far as a key. */
function RoleRefusal() {
  const answer = session.value;
  return (
    <Refusal title="You cannot give this application access">
      <Notice tone="warning">
        <p>
          <strong>Only people who manage API keys can give an application access</strong>
          {answer ? ` to ${answer.tenant.name}` : ''}: a company IT admin, an executive or a platform admin.
          {answer ? ` Your role (${roleName(answer.user.role)}) cannot.` : ''}
        </p>
      </Notice>
      <p>Ask one of them to approve the application, or to give you a role that manages API keys.</p>
    </Refusal>
  );
}

function ExpiredRefusal() {
  return (
    <Refusal title="This request has expired">
      <Notice tone="warning">
        <p>
          <strong>This request expired, or it was answered already.</strong> Start again from the application:
          it opens a new one.
        </p>
      </Notice>
    </Refusal>
  );
}

/** Who asks, where the browser returns, for which organization, and who answers. */
function Facts({ view }: { view: ConsentView }) {
  const place = returnPlace(view.client.redirectUri);
  const answer = session.value;
  return (
    <dl class="consent-facts">
      <dt>Application</dt>
      <dd>
        <strong class="consent-client">“{view.client.name}”</strong>
        <p class="consent-note">
          The name the application gave itself: hubgate cannot check it. Approve only an application you
          started yourself just now.
        </p>
      </dd>
      <dt>Returns to</dt>
      <dd>
        <span class="mono consent-host">{place.host}</span>
        {place.local ? <p class="consent-note">An application on this computer.</p> : null}
      </dd>
      <dt>Organization</dt>
      <dd>
        <bdi>{view.tenant.name}</bdi>
      </dd>
      {answer ? (
        <>
          <dt>Approving as</dt>
          <dd class="consent-you">
            {answer.user.email} <span class="muted">· {roleName(answer.user.role)}</span>
          </dd>
        </>
      ) : null}
    </dl>
  );
}

/** The scopes offered as checkboxes, all ticked at first. */
function ScopeChoice({
  scopes,
  chosen,
  onToggle,
  error,
}: {
  scopes: string[];
  chosen: ReadonlySet<string>;
  onToggle: (scope: string, on: boolean) => void;
  error: string | undefined;
}) {
  const id = useId();
  const errorId = `${id}-error`;
  return (
    <fieldset class={error ? 'consent-scopes field-invalid' : 'consent-scopes'}>
      <legend>What it may do</legend>
      <p class="field-hint">A higher level includes the lower ones. Untick what it does not need.</p>
      {scopes.map((scope, index) => {
        const boxId = `${id}-${index}`;
        const helpId = `${boxId}-help`;
        return (
          <div class="check key-choice key-level" key={scope}>
            <input
              id={boxId}
              type="checkbox"
              name="scopes"
              value={scope}
              checked={chosen.has(scope)}
              aria-invalid={error ? true : undefined}
              aria-describedby={[helpId, error ? errorId : ''].filter(Boolean).join(' ')}
              onChange={(event) => onToggle(scope, event.currentTarget.checked)}
            />
            <div>
              <label for={boxId}>{scopeName(scope)}</label>
              <p class="key-level-help" id={helpId}>
                {SCOPE_HELP[scope] ?? scope}
              </p>
            </div>
          </div>
        );
      })}
      {error ? (
        <p class="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}

/**
 * The answer: POST it, then send the browser to the redirect URI the server answered (a code, or
 * `error=access_denied`). The page says where it goes while the browser leaves.
 */
function useDecision(request: string, chosen: ReadonlySet<string>) {
  const [leaving, setLeaving] = useState(false);
  const decide = useAction(async (approve: boolean) => {
    const body = approve ? { request, approve, scopes: [...chosen] } : { request, approve };
    const { redirectUri } = await api(routes.mcp.decide, { body }).catch((error: unknown) => {
      // Answered in another tab, or the ten minutes ran out while the page was open.
      throw error instanceof ApiError && error.code === 'not_found' ? error.saying(EXPIRED) : error;
    });
    setLeaving(true);
    window.location.assign(redirectUri);
  });
  return { decide, leaving };
}

/** The request itself: who, where, which organization, the scopes, and Approve or Deny. */
function ConsentForm({ request, view }: { request: string; view: ConsentView }) {
  const [chosen, setChosen] = useState<ReadonlySet<string>>(() => new Set(view.scopes));
  const [noneChosen, setNoneChosen] = useState(false);
  const { decide, leaving } = useDecision(request, chosen);
  const form = useRef<HTMLFormElement>(null);
  const busy = decide.busy || leaving;
  const place = returnPlace(view.client.redirectUri);

  useEffect(() => {
    if (noneChosen) form.current?.querySelector<HTMLElement>('input[type="checkbox"]')?.focus();
  }, [noneChosen]);

  const toggle = (scope: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(scope);
    else next.delete(scope);
    setChosen(next);
    if (next.size > 0) setNoneChosen(false);
  };
  const grantable = view.scopes.length > 0;
  return (
    <form
      ref={form}
      class="form"
      onSubmit={(event) => {
        event.preventDefault();
        if (chosen.size === 0) return setNoneChosen(true);
        void decide.run(true);
      }}
    >
      <Facts view={view} />
      {grantable ? (
        <ScopeChoice
          scopes={view.scopes}
          chosen={chosen}
          onToggle={toggle}
          error={noneChosen ? 'Choose at least one, or deny.' : undefined}
        />
      ) : (
        <Notice tone="warning">
          <p>
            Nothing it asks for is yours to give in {view.tenant.name}: your organization is not entitled to
            it, or your role does not reach it. Deny, and ask your platform operator.
          </p>
        </Notice>
      )}
      <ErrorNotice error={decide.error} />
      {leaving ? (
        <p class="loading" role="status">
          <span class="spinner" aria-hidden="true" />
          Returning you to {place.host}…
        </p>
      ) : null}
      <div class="form-actions">
        {grantable ? (
          <button type="submit" class="button button-primary" disabled={busy} aria-busy={decide.busy}>
            Approve
          </button>
        ) : null}
        <button type="button" class="button" disabled={busy} onClick={() => void decide.run(false)}>
          Deny
        </button>
      </div>
      <p class="consent-note">
        Its access lasts until someone revokes it under MCP clients on the API keys page.
      </p>
    </form>
  );
}

/**
 * `/consent?request=…` (docs/api/mcp.md): where `GET /oauth/authorize` sends the browser, after
 * sign-in when needed.
 */
export function ConsentPage() {
  const { query } = useLocation();
  const request = query.request ?? '';
  const allowed = canManageKeys(session.value);
  const view = useResource(
    (signal) =>
      allowed && request
        ? api(routes.mcp.consent, { params: { request }, signal })
        : Promise.resolve(undefined),
    `${allowed}:${request}`,
  );
  const refused = !allowed || view.error?.code === 'role_forbidden';
  const expired = !request || view.error?.code === 'not_found';
  useTitle(
    refused
      ? 'You cannot give this application access'
      : expired
        ? 'This request has expired'
        : 'An application asks for access',
  );

  if (refused) return <RoleRefusal />;
  if (expired) return <ExpiredRefusal />;
  if (view.error) {
    return (
      <Refusal title="The request could not be loaded">
        <ErrorNotice error={view.error} />
      </Refusal>
    );
  }
  if (!view.data) return <Loading what="Loading the request" />;
  return (
    <section class="card card-narrow consent-card" aria-labelledby="consent-title">
      <h1 id="consent-title">An application asks for access</h1>
      <p class="page-description">
        It will use hubgate’s tools for agents (its MCP server) in <bdi>{view.data.tenant.name}</bdi>, with
        the scopes you choose, until its access is revoked.
      </p>
      <ConsentForm request={request} view={view.data} />
    </section>
  );
}
