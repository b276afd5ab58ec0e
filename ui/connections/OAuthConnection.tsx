// An OAuth2 connection's page (docs/api/oauth.md, docs/operators/web-ui.md): whether it is connected to its
// provider, in words; Connect or Authorize again (a person's grant only), which sends the browser to the
// provider; what the provider's callback said; edit, pause and resume, revoke; and what the connection
// is for (calling the provider's API through hubgate). No event log: it receives no events.
import { useLocation } from 'preact-iso';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { api, routeUrl, withQuery } from '../common/api.js';
import { ConfirmDialog } from '../common/Dialog.js';
import { Time } from '../common/format.js';
import { useAction, useFollow, type Resource } from '../common/hooks.js';
import { PageHeader } from '../common/Layout.js';
import { DoneNotice, ErrorNotice, StatusBadge, useDoneNotice } from '../common/Notice.js';
import { routes, type Connection, type Connector, type OAuthGrant } from '../common/routes.js';
import { mayManage, pageUrl, reaches } from '../common/viewer.js';
import { EditDialog } from './EditDialog.js';
import { ConnectionRevokeDialog, revokedText } from './RevokeDialog.js';
import { AUTHORIZATION_BADGE, CONNECTION_STATUS_WORDS } from './status.js';

export { isOAuthConnection } from './status.js';

type Authorization = NonNullable<Connection['authorization']>;

const NO_AUTHORIZATION: Authorization = { status: 'none', scopes: [], expiresAt: null };

/** What the page knows of the connection: its provider's name and grant (once the catalog answered). */
interface Provider {
  name: string;
  /** Undefined until the catalog answers: nothing to authorize is offered meanwhile. */
  grant: OAuthGrant | undefined;
}

/**
 * What follows the badge, so that both read as one sentence: "Connected — scopes a, b, token renewed
 * automatically." An expired authorization says what to do about it, and who can.
 */
function authorizationWords(authorization: Authorization, provider: Provider, canOperate: boolean): string {
  const { name } = provider;
  if (provider.grant === 'client_credentials') {
    return authorization.status === 'authorized'
      ? `— hubgate signs in at ${name} with its own client credentials and renews the token automatically.`
      : `— ${name} does not give hubgate a token with its client credentials, so calls through this connection are refused. The platform operator can check the provider’s client ID and secret.`;
  }
  switch (authorization.status) {
    case 'authorized':
      return authorization.scopes.length > 0
        ? `— scopes ${authorization.scopes.join(', ')}, token renewed automatically.`
        : '— token renewed automatically.';
    case 'expired':
      return `— ${name} no longer accepts hubgate’s authorization, so calls through this connection are refused. ${
        canOperate
          ? 'Authorize again to fix it.'
          : 'An administrator of your organization can authorize it again.'
      }`;
    default:
      return canOperate
        ? `— connect it to sign in at ${name} and allow hubgate to call its API for your organization.`
        : `— an administrator of your organization connects it by signing in at ${name}.`;
  }
}

/** What the callback said (`?authorized=true` or `?authorizationError=…`), taking the focus. */
function CallbackNotice({ provider, stillAuthorized }: { provider: string; stillAuthorized: boolean }) {
  const { query, path, route } = useLocation();
  const ref = useRef<HTMLParagraphElement>(null);
  const authorized = query.authorized === 'true';
  const error = query.authorizationError;
  useEffect(() => {
    if (authorized || error) ref.current?.focus();
  }, [authorized, error]);
  if (!authorized && !error) return null;
  const tone = authorized ? 'success' : 'error';
  return (
    <div class={`notice notice-${tone} done-notice`} role={authorized ? 'status' : 'alert'}>
      <p ref={ref} tabIndex={-1} class="focus-target">
        {authorized ? (
          `Connected to ${provider}. hubgate keeps the tokens and renews them; you can call ${provider}’s API through this connection now.`
        ) : (
          <>
            <strong>The connection to {provider} was not authorized. </strong>
            {error}
            {/* Refusing a new authorization leaves the one it had. */}
            {stillAuthorized ? ' Its earlier authorization still holds.' : null}
          </>
        )}
      </p>
      <div class="row">
        <button
          type="button"
          class="button button-small button-quiet"
          onClick={() => route(withQuery(path, {}), true)}
        >
          Dismiss<span class="visually-hidden"> this message</span>
        </button>
      </div>
    </div>
  );
}

/**
 * While an authorization runs in another tab, the connection is read again whenever this page gets
 * the focus back, so its state follows what was done there.
 */
function useReloadOnReturn(waiting: boolean, reload: () => void) {
  useEffect(() => {
    if (!waiting) return;
    window.addEventListener('focus', reload);
    return () => window.removeEventListener('focus', reload);
  }, [waiting, reload]);
}

/** Said while the provider's page is open in another tab, or the link to open it when none opened. */
function ElsewhereNotice({ provider, blockedUrl }: { provider: string; blockedUrl: string }) {
  return (
    <div class="notice" role="status">
      {blockedUrl ? (
        <p>
          The browser did not open a new tab.{' '}
          <a href={blockedUrl} target="_blank" rel="noopener noreferrer">
            Open {provider} to connect
          </a>
          , then come back here.
        </p>
      ) : (
        <p>Finish connecting to {provider} in the new tab; this page shows the result when you come back.</p>
      )}
    </div>
  );
}

/** A dialog the page opens over itself. */
type OAuthDialog = 'edit' | 'pause' | 'resume' | 'revoke' | null;

/**
 * The page's state: the dialog open, what just happened, and starting the authorization (asks hubgate
 * for the provider's URL and goes there; busy until the browser has left).
 */
function useOAuthConnectionPage(connection: Resource<Connection>) {
  const [open, setOpenState] = useState<OAuthDialog>(null);
  const { done, setDone, ref } = useDoneNotice(connection.data?.id ?? '');
  const [openedElsewhere, setOpenedElsewhere] = useState<string | null>(null);
  const authorize = useAction(async (id: string) => {
    const { authorizationUrl } = await api(routes.connections.authorize, { params: { id } });
    // A portal framed by another site goes to the provider in a tab of its own: providers refuse to
    // be framed, and the callback comes back to the portal there (docs/api/portal.md).
    if (window.top !== window.self) {
      const tab = window.open(authorizationUrl, '_blank');
      if (tab) tab.opener = null;
      setOpenedElsewhere(tab ? '' : authorizationUrl);
      return;
    }
    window.location.assign(authorizationUrl);
    await new Promise<never>(() => undefined);
  });
  useReloadOnReturn(openedElsewhere !== null, connection.reload);
  const setOpen = (next: OAuthDialog) => {
    setDone(null);
    setOpenState(next);
  };
  const changed = (text: string) => {
    setOpenState(null);
    connection.reload();
    setDone(text);
  };
  return { open, setOpen, done, setDone, doneRef: ref, authorize, openedElsewhere, changed };
}

type OAuthPage = ReturnType<typeof useOAuthConnectionPage>;

/**
 * What an admin can do, by the connection's state: Connect or Authorize again (a person's grant; the
 * primary action unless it is connected), pause or resume, edit (name, throttle), revoke. A revoked one: nothing.
 */
function OAuthActions({
  connection,
  provider,
  editable,
  page,
}: {
  connection: Connection;
  provider: Provider;
  editable: boolean;
  page: OAuthPage;
}) {
  if (connection.status === 'disabled') return null;
  const status = (connection.authorization ?? NO_AUTHORIZATION).status;
  const { authorize } = page;
  return (
    <>
      {provider.grant === 'authorization_code' && mayManage() ? (
        <button
          type="button"
          class={status === 'authorized' ? 'button' : 'button button-primary'}
          disabled={authorize.busy}
          aria-busy={authorize.busy}
          onClick={() => void authorize.run(connection.id)}
        >
          {authorize.busy ? `Opening ${provider.name}…` : status === 'none' ? 'Connect' : 'Authorize again'}
        </button>
      ) : null}
      {/* A paused connection's Resume is in its banner. */}
      {connection.status === 'active' ? (
        <button type="button" class="button" onClick={() => page.setOpen('pause')}>
          Pause
        </button>
      ) : null}
      {editable ? (
        <button type="button" class="button" onClick={() => page.setOpen('edit')}>
          Edit
        </button>
      ) : null}
      {mayManage() ? (
        <button type="button" class="button connection-revoke" onClick={() => page.setOpen('revoke')}>
          Revoke
        </button>
      ) : null}
    </>
  );
}

/** The paused connection's banner (the delivering connections' look): since when, what it means, Resume. */
function OAuthPausedBanner({
  connection,
  provider,
  canOperate,
  onResume,
}: {
  connection: Connection;
  provider: string;
  canOperate: boolean;
  onResume: () => void;
}) {
  const id = useId();
  return (
    <section class="paused-banner" aria-labelledby={id}>
      <span class="paused-icon" aria-hidden="true" />
      <div class="paused-text">
        <h2 id={id}>Calls are paused</h2>
        <p>
          “{connection.displayName}” was paused
          {connection.pausedAt ? (
            <>
              {' '}
              on <Time at={connection.pausedAt} mode="absolute" />
            </>
          ) : null}
          . hubgate refuses calls through it to {provider}’s API until it is resumed; its authorization is
          kept.
        </p>
      </div>
      {canOperate ? (
        <div class="paused-actions">
          <button type="button" class="button button-primary" onClick={onResume}>
            Resume
          </button>
        </div>
      ) : null}
    </section>
  );
}

/** The authorization fact: its badge and its words, or, once revoked, that nothing is called any more. */
function AuthorizationFact({
  connection,
  provider,
  canOperate,
}: {
  connection: Connection;
  provider: Provider;
  canOperate: boolean;
}) {
  const authorization = connection.authorization ?? NO_AUTHORIZATION;
  const badge = AUTHORIZATION_BADGE[authorization.status];
  return (
    <div class="connection-fact-wide">
      <dt>Authorization</dt>
      <dd>
        {connection.status === 'disabled' ? (
          <span class="muted">None: calls through a revoked connection are refused</span>
        ) : (
          <>
            <StatusBadge status={badge.status} label={badge.label} />{' '}
            <span>{authorizationWords(authorization, provider, canOperate)}</span>
          </>
        )}
      </dd>
    </div>
  );
}

/** What the connection is: connector, status, its authorization in words, the token's expiry, created. */
function OAuthSummary({
  connection,
  provider,
  canOperate,
}: {
  connection: Connection;
  provider: Provider;
  canOperate: boolean;
}) {
  const authorization = connection.authorization ?? NO_AUTHORIZATION;
  return (
    <section class="card" aria-label="Connection">
      <dl class="connection-facts">
        <div>
          <dt>Connector</dt>
          <dd>{provider.name}</dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={connection.status} label={CONNECTION_STATUS_WORDS[connection.status]} />
            {connection.revokedAt ? (
              <span class="muted">
                {' '}
                since <Time at={connection.revokedAt} mode="absolute" />
              </span>
            ) : null}
          </dd>
        </div>
        <AuthorizationFact connection={connection} provider={provider} canOperate={canOperate} />
        {connection.status !== 'disabled' &&
        authorization.status === 'authorized' &&
        authorization.expiresAt ? (
          <div>
            <dt>Current token expires</dt>
            <dd>
              <Time at={authorization.expiresAt} mode="absolute" />
            </dd>
          </div>
        ) : null}
        <div>
          <dt>Created</dt>
          <dd>
            <Time at={connection.createdAt} mode="absolute" />
          </dd>
        </div>
        <div>
          <dt>Connection ID</dt>
          <dd class="mono break">{connection.id}</dd>
        </div>
      </dl>
    </section>
  );
}

/** What the connection is for, and how a system of the organization uses it. */
function OAuthUse({ connection, provider }: { connection: Connection; provider: Provider }) {
  const proxy = routeUrl(routes.connections.proxy, { params: { id: connection.id } });
  const { name } = provider;
  return (
    <section class="card" aria-labelledby="oauth-use-title">
      <h2 id="oauth-use-title">Using this connection</h2>
      <p>
        Your systems call {name}’s API through hubgate with an API key that may operate integrations: a
        request to <code class="break">{proxy}&lt;path&gt;</code> goes to {name}’s API at{' '}
        <code>&lt;path&gt;</code> with the connection’s access token added. No token is ever shown or handed
        out.
      </p>
      <p class="muted">
        This connection receives no events and needs no credentials of its own:{' '}
        {provider.grant === 'client_credentials'
          ? `hubgate signs in at ${name} with the client credentials the platform operator set up.`
          : `it is bound by authorizing at ${name}.`}
      </p>
    </section>
  );
}

/** "Pause “GitHub API”?" and "Resume “GitHub API”?": calls refused meanwhile, the authorization kept. */
function PauseResumeDialog({
  connection,
  provider,
  resume,
  onDone,
  onClose,
}: {
  connection: Connection;
  provider: string;
  resume: boolean;
  onDone: (text: string) => void;
  onClose: () => void;
}) {
  const name = `“${connection.displayName}”`;
  const act = useAction(async () => {
    const params = { id: connection.id };
    if (resume) await api(routes.connections.resume, { params, body: { replaySkipped: false } });
    else await api(routes.connections.pause, { params });
    onDone(
      resume
        ? `${name} was resumed: calls through it reach ${provider}’s API again.`
        : `${name} is paused: calls through it are refused until you resume it.`,
    );
  });
  return (
    <ConfirmDialog
      title={`${resume ? 'Resume' : 'Pause'} ${name}?`}
      confirmLabel={resume ? 'Resume' : 'Pause'}
      busy={act.busy}
      onConfirm={() => void act.run()}
      onClose={onClose}
      error={
        <ErrorNotice error={act.error} title={`The connection was not ${resume ? 'resumed' : 'paused'}.`} />
      }
    >
      <p>
        {resume
          ? `Calls through ${name} are passed on to ${provider}’s API again.`
          : `hubgate refuses calls through ${name} to ${provider}’s API until you resume it.`}
      </p>
      {resume ? null : <p class="muted">Its authorization is kept: nothing needs to be connected again.</p>}
    </ConfirmDialog>
  );
}

/** The dialog open over the page, if any. */
function OAuthDialogs({
  page,
  connection,
  connector,
  provider,
}: {
  page: OAuthPage;
  connection: Connection;
  connector: Connector | undefined;
  provider: string;
}) {
  const close = () => page.setOpen(null);
  switch (page.open) {
    case 'pause':
    case 'resume':
      return (
        <PauseResumeDialog
          connection={connection}
          provider={provider}
          resume={page.open === 'resume'}
          onDone={page.changed}
          onClose={close}
        />
      );
    case 'edit':
      return connector ? (
        <EditDialog
          connection={connection}
          connector={connector}
          onSaved={(saved) =>
            saved ? page.changed(`Saved the changes to “${saved.displayName}”.`) : close()
          }
          onClose={close}
        />
      ) : null;
    case 'revoke':
      return (
        <ConnectionRevokeDialog
          connection={connection}
          onRevoked={(revoked) => page.changed(revokedText(revoked))}
          onClose={close}
        />
      );
    default:
      return null;
  }
}

/**
 * An OAuth2 connection's page: no event log (nothing is delivered to it), but its authorization, the
 * way to connect or authorize again (a person's grant only: client credentials bind it at creation),
 * what can be done with it like any connection (edit, pause and resume, revoke), and what it is for.
 */
export function OAuthConnectionView({
  connection,
  connector,
  canOperate,
}: {
  /** Loaded: the page shows its data, and loads it again after each change. */
  connection: Resource<Connection>;
  /** Its connector in the catalog; undefined until the catalog answers. */
  connector: Connector | undefined;
  canOperate: boolean;
}) {
  const page = useOAuthConnectionPage(connection);
  // Its authorization expires, another person pauses or revokes it: the page follows.
  useFollow(connection);
  const current = connection.data;
  if (!current) return null;
  const provider: Provider = {
    name: connector?.name ?? current.connectorKey,
    grant: connector?.oauth2?.grant,
  };
  return (
    <>
      <PageHeader
        title={current.displayName}
        description={`${provider.name} connection: calls ${provider.name}’s API for your organization through hubgate, which keeps the tokens.`}
        back={{ href: pageUrl('/connections'), label: 'Connections' }}
        actions={
          canOperate ? (
            <OAuthActions
              connection={current}
              provider={provider}
              editable={Boolean(connector)}
              page={page}
            />
          ) : null
        }
      />
      <CallbackNotice
        provider={provider.name}
        stillAuthorized={current.authorization?.status === 'authorized'}
      />
      <DoneNotice done={page.done} noticeRef={page.doneRef} onDismiss={() => page.setDone(null)} />
      {/* A failed read again keeps what was shown, and says so; the next read may clear it. */}
      <ErrorNotice error={connection.error} title="The connection could not be read again." />
      <ErrorNotice
        error={page.authorize.error}
        title={`hubgate could not start connecting to ${provider.name}.`}
      />
      {page.openedElsewhere === null ? null : (
        <ElsewhereNotice provider={provider.name} blockedUrl={page.openedElsewhere} />
      )}
      {current.status === 'paused' ? (
        <OAuthPausedBanner
          connection={current}
          provider={provider.name}
          canOperate={canOperate}
          onResume={() => page.setOpen('resume')}
        />
      ) : null}
      <OAuthSummary connection={current} provider={provider} canOperate={canOperate} />
      {/* A revoked connection is no longer there to be used. */}
      {/* The portal's token does not reach the proxy: the page says nothing of it there. */}
      {current.status === 'disabled' || !reaches(routes.connections.proxy) ? null : (
        <OAuthUse connection={current} provider={provider} />
      )}
      <OAuthDialogs page={page} connection={current} connector={connector} provider={provider.name} />
    </>
  );
}
