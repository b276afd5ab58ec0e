// The portal page (docs/api/portal.md), `/portal/<tenantId>#code=…`: what a platform shows its own
// customers, framed in its product or opened by link. The tenant's branding, the session's
// connections and, within its access, the pages the tenant UI has for them (connections, a
// connection's event log, a delivery; create where it may manage) — and nothing else of hubgate: no
// navigation, no sign-in, no sign-out, but when the session ends.
import type { AnyComponent, ComponentChildren } from 'preact';
import { Route, Router, useLocation } from 'preact-iso';
import { useEffect } from 'preact/hooks';
import { accentProperties, shownLogo } from '../common/branding.js';
import { Time } from '../common/format.js';
import { useTitle } from '../common/hooks.js';
import { ErrorNotice, Loading } from '../common/Notice.js';
import type { Branding, PortalSessionView } from '../common/routes.js';
import { mayManage, pageUrl } from '../common/viewer.js';
import { ConnectionsPage } from '../connections/ConnectionsPage.js';
import { NewConnectionPage } from '../connections/NewConnectionPage.js';
import { ConnectionEventsPage } from '../deliveries/ConnectionPage.js';
import { DeliveryPage } from '../deliveries/DeliveryPage.js';
import { portalState, portalTenantOf, startPortal } from './session.js';

const NO_BRANDING: Branding = { name: null, logoUrl: null, accentColor: null };

/** The portal's frame: the tenant's name, logo and colour, when the session ends, and the page. */
function PortalFrame({ view, children }: { view: PortalSessionView | null; children: ComponentChildren }) {
  const branding = view?.branding ?? NO_BRANDING;
  const name = branding.name ?? view?.tenant.name ?? null;
  const accent = accentProperties(branding.accentColor);
  const logo = shownLogo(branding.logoUrl);
  return (
    <div class={accent ? 'portal-shell branded' : 'portal-shell'} style={accent ?? {}}>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="portal-bar">
        <span class="portal-brand">
          {/* The name beside it says who it is: the logo itself is decoration. */}
          {logo ? <img class="portal-logo" src={logo} alt="" /> : null}
          {name ? <bdi>{name}</bdi> : null}
        </span>
        {view ? (
          <span class="portal-ends">
            This session ends at <Time at={view.expiresAt} mode="absolute" />
          </span>
        ) : null}
      </header>
      <main id="main" class="portal-content" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

/** One card in words: why there is no portal to show, and what to do. */
function PortalMessage({ title, children }: { title: string; children: ComponentChildren }) {
  useTitle(title);
  return (
    <section class="card card-narrow" aria-labelledby="portal-message-title">
      <h1 id="portal-message-title">{title}</h1>
      {children}
    </section>
  );
}

function PortalNotFound() {
  return (
    <PortalMessage title="Page not found">
      <p>There is no page at this address.</p>
      <p>
        <a class="button button-primary" href={pageUrl('/connections')}>
          Go to the connections
        </a>
      </p>
    </PortalMessage>
  );
}

/** Create is for sessions that may manage; others get the "not found" of any other address. */
function managing<P>(Page: AnyComponent<P>) {
  return function ManagingPage(props: P) {
    return mayManage() ? <Page {...(props as P & object)} /> : <PortalNotFound />;
  };
}
const NewConnection = managing(NewConnectionPage);

function PortalPages({ tenantId }: { tenantId: string }) {
  const base = `/portal/${tenantId}`;
  return (
    <Router>
      <Route path={base} component={ConnectionsPage} />
      <Route path={`${base}/connections`} component={ConnectionsPage} />
      <Route path={`${base}/connections/new`} component={NewConnection} />
      <Route path={`${base}/connections/:id`} component={ConnectionEventsPage} />
      <Route path={`${base}/connections/:id/events`} component={ConnectionEventsPage} />
      <Route path={`${base}/connections/:id/events/:deliveryId`} component={DeliveryPage} />
      <Route default component={PortalNotFound} />
    </Router>
  );
}

/** Who ended the session, in words, from what the page knew of it. */
function EndedMessage({ view }: { view: PortalSessionView | null }) {
  const who = view?.branding.name ?? view?.tenant.name;
  const expired = view !== null && new Date(view.expiresAt).getTime() <= Date.now();
  return (
    <PortalMessage title="This session has ended">
      <p>
        {view === null ? (
          'This portal session has ended.'
        ) : expired ? (
          <>
            It ended at <Time at={view.expiresAt} mode="absolute" />, as planned when it was opened.
          </>
        ) : (
          'It was ended before its time.'
        )}{' '}
        Nothing more can be seen or changed here. To look again, open the portal anew
        {who ? (
          <>
            {' '}
            from <bdi>{who}</bdi>
          </>
        ) : null}
        .
      </p>
    </PortalMessage>
  );
}

/** The portal of the tenant in the address: starting, open, or why it cannot be shown. */
export function PortalApp() {
  const { path } = useLocation();
  const tenantId = portalTenantOf(path) ?? '';
  useEffect(() => void startPortal(tenantId), [tenantId]);
  const state = portalState.value;
  switch (state.kind) {
    case 'starting':
      return (
        <PortalFrame view={null}>
          <Loading what="Opening the portal" />
        </PortalFrame>
      );
    case 'open':
      return (
        <PortalFrame view={state.view}>
          <PortalPages tenantId={tenantId} />
        </PortalFrame>
      );
    case 'ended':
      return (
        <PortalFrame view={state.view}>
          <EndedMessage view={state.view} />
        </PortalFrame>
      );
    case 'refused':
      return (
        <PortalFrame view={null}>
          <PortalMessage title="This link no longer works">
            <p>
              A portal link works once, for ten minutes. This one was already used, has expired, or its
              session was ended. Open the portal again from where you found the link.
            </p>
          </PortalMessage>
        </PortalFrame>
      );
    case 'no-code':
      return (
        <PortalFrame view={null}>
          <PortalMessage title="Open the portal from its link">
            <p>
              This page needs the link it was opened with. Open the portal again from where you found the
              link.
            </p>
          </PortalMessage>
        </PortalFrame>
      );
    case 'failed':
      return (
        <PortalFrame view={null}>
          <PortalMessage title="The portal could not be opened">
            <ErrorNotice error={state.error} />
            <button type="button" class="button button-primary" onClick={() => void startPortal(tenantId)}>
              Try again
            </button>
          </PortalMessage>
        </PortalFrame>
      );
  }
}
