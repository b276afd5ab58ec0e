// The app: which page each URL shows (preact-iso), signed-in pages in the layout, the operator
// console handed its own paths, a "not found" of its own, and focus moved to each new page.
import type { AnyComponent } from 'preact';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { useEffect, useRef, useState } from 'preact/hooks';
import { AuditLogPage } from './audit/AuditLogPage.js';
import type { ApiError } from './common/api.js';
import { useTitle } from './common/hooks.js';
import { BareLayout, Layout } from './common/Layout.js';
import { ErrorNotice, Loading } from './common/Notice.js';
import { loadSession, session, sessionProblem, setNavigator } from './common/session.js';
import { ConnectApp, isConnectPath } from './connect/ConnectApp.js';
import { ConnectionsPage } from './connections/ConnectionsPage.js';
import { NewConnectionPage } from './connections/NewConnectionPage.js';
import { ConsentPage } from './consent/ConsentPage.js';
import { ConnectionEventsPage } from './deliveries/ConnectionPage.js';
import { DeliveryPage } from './deliveries/DeliveryPage.js';
import { EventTypesPage } from './event-types/EventTypesPage.js';
import { ApiKeysPage } from './keys/ApiKeysPage.js';
import { OverviewPage } from './overview/OverviewPage.js';
import { InvitePage } from './people/InvitePage.js';
import { PeoplePage } from './people/PeoplePage.js';
import { isConsolePath, PlatformApp } from './platform/PlatformApp.js';
import { PortalApp } from './portal/PortalApp.js';
import { isPortalPath } from './portal/session.js';
import { ProfilePage } from './profile/ProfilePage.js';
import { SettingsPage } from './settings/SettingsPage.js';
import { SetupPage } from './setup/SetupPage.js';
import { SignInPage } from './sign-in/SignInPage.js';
import { SourcePage } from './sources/SourcePage.js';
import { SourcesPage } from './sources/SourcesPage.js';
import { UsagePage } from './usage/UsagePage.js';

function NotFoundBody() {
  useTitle('Page not found');
  return (
    <section class="card card-narrow">
      <h1>Page not found</h1>
      <p>There is no page at this address. It may have moved, or the link may be mistyped.</p>
      <p>
        <a class="button button-primary" href="/">
          Go to the overview
        </a>
      </p>
    </section>
  );
}

/** Any UI address that names no page (docs/operators/web-ui.md: the UI shows its own "not found"). */
function NotFoundPage() {
  if (session.value) {
    return (
      <Layout>
        <NotFoundBody />
      </Layout>
    );
  }
  return (
    <main id="main" class="bare" tabIndex={-1}>
      <NotFoundBody />
    </main>
  );
}

/**
 * A page for signed-in people: anyone else goes to sign-in and comes back here afterwards (the
 * address with its query). `Frame` is the layout around it: the navigation, or none.
 */
function signedIn<P>(Page: AnyComponent<P>, Frame: typeof Layout = Layout) {
  return function SignedInPage(props: P) {
    const { url, route } = useLocation();
    const answer = session.value;
    useEffect(() => {
      if (answer === null) route(`/sign-in?next=${encodeURIComponent(url)}`, true);
    }, [answer, url, route]);
    if (!answer) return <Loading />;
    return (
      <Frame>
        <Page {...(props as P & object)} />
      </Frame>
    );
  };
}

function bare<P>(Page: AnyComponent<P>) {
  return function BarePage(props: P) {
    return (
      <BareLayout>
        <Page {...(props as P & object)} />
      </BareLayout>
    );
  };
}

const Overview = signedIn(OverviewPage);
const Connections = signedIn(ConnectionsPage);
const NewConnection = signedIn(NewConnectionPage);
const ConnectionEvents = signedIn(ConnectionEventsPage);
const Delivery = signedIn(DeliveryPage);
const ApiKeys = signedIn(ApiKeysPage);
const Sources = signedIn(SourcesPage);
const SourceRequests = signedIn(SourcePage);
const Usage = signedIn(UsagePage);
const EventTypes = signedIn(EventTypesPage);
const AuditLog = signedIn(AuditLogPage);
const Profile = signedIn(ProfilePage);
const People = signedIn(PeoplePage);
const Settings = signedIn(SettingsPage);
// An application's request for access: one question, without the navigation to wander off with.
const Consent = signedIn(ConsentPage, BareLayout);
const Invite = bare(InvitePage);
const SignIn = bare(SignInPage);
const Setup = bare(SetupPage);

/** Gives the API client a way to move between pages, and puts focus on each new page. */
function Navigation() {
  const { route, path } = useLocation();
  const first = useRef(true);
  useEffect(() => setNavigator(route), [route]);
  useEffect(() => {
    // A full page load starts at the top of the document (where "Skip to content" is); a move to
    // another page starts at the new page, so a screen reader hears it and Tab begins there.
    if (first.current) {
      first.current = false;
      return;
    }
    document.getElementById('main')?.focus({ preventScroll: true });
    window.scrollTo(0, 0);
  }, [path]);
  return null;
}

/** The session could not be asked for: say why, and offer to ask again. */
function Unreachable({ error }: { error: ApiError }) {
  const [busy, setBusy] = useState(false);
  return (
    <BareLayout>
      <section class="card card-narrow" aria-labelledby="unreachable-title">
        <h1 id="unreachable-title">hubgate is not answering</h1>
        <ErrorNotice error={error} />
        <button
          type="button"
          class="button button-primary"
          disabled={busy}
          onClick={() => {
            setBusy(true);
            void loadSession().finally(() => setBusy(false));
          }}
        >
          {busy ? 'Trying…' : 'Try again'}
        </button>
      </section>
    </BareLayout>
  );
}

/**
 * The tenant UI waits for the session; the operator console (`/platform…`) and the portal page
 * (`/portal/<tenantId>…`) need none, so they never wait for it nor send anyone to sign-in.
 */
function Pages() {
  const { path } = useLocation();
  if (isConsolePath(path)) return <PlatformApp />;
  if (isPortalPath(path)) return <PortalApp />;
  if (isConnectPath(path)) return <ConnectApp />;
  if (session.value === undefined) {
    const problem = sessionProblem.value;
    return problem ? <Unreachable error={problem} /> : <Loading what="Starting hubgate" />;
  }
  return (
    <Router>
      <Route path="/" component={Overview} />
      <Route path="/connections" component={Connections} />
      <Route path="/connections/new" component={NewConnection} />
      <Route path="/connections/:id" component={ConnectionEvents} />
      <Route path="/connections/:id/events" component={ConnectionEvents} />
      <Route path="/connections/:id/events/:deliveryId" component={Delivery} />
      <Route path="/sources" component={Sources} />
      <Route path="/sources/:id" component={SourceRequests} />
      <Route path="/usage" component={Usage} />
      <Route path="/event-types" component={EventTypes} />
      <Route path="/api-keys" component={ApiKeys} />
      <Route path="/audit-log" component={AuditLog} />
      <Route path="/people" component={People} />
      <Route path="/settings" component={Settings} />
      <Route path="/profile" component={Profile} />
      <Route path="/consent" component={Consent} />
      <Route path="/invite" component={Invite} />
      <Route path="/sign-in" component={SignIn} />
      <Route path="/setup" component={Setup} />
      <Route default component={NotFoundPage} />
    </Router>
  );
}

export function App() {
  return (
    <LocationProvider>
      <Navigation />
      <Pages />
    </LocationProvider>
  );
}
