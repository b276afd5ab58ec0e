// The frames of the pages: the signed-in layout (top bar, navigation by role, main), the bare one
// for sign-in and setup, and each page's header with its title, description, actions and refresh.
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { roleName } from './format.js';
import { useTitle } from './hooks.js';
import { canManageKeys, session, signOut } from './session.js';

interface NavItem {
  href: string;
  label: string;
  /** Also current for paths under it (a connection's events under Connections). */
  prefix?: string;
  keyManagers?: boolean;
  /** Only where the organization is entitled to this module (its pages' routes need it). */
  module?: string;
  /** Only for a PLATFORM_ADMIN: the operator console. */
  platformAdmins?: boolean;
}

const NAV: NavItem[] = [
  { href: '/', label: 'Overview' },
  { href: '/connections', label: 'Connections', prefix: '/connections' },
  { href: '/sources', label: 'Sources', prefix: '/sources' },
  { href: '/usage', label: 'Usage', module: 'integrations' },
  { href: '/event-types', label: 'Event types', keyManagers: true },
  { href: '/api-keys', label: 'API keys', keyManagers: true },
  { href: '/people', label: 'People', keyManagers: true },
  { href: '/audit-log', label: 'Audit log', keyManagers: true },
  { href: '/settings', label: 'Settings', keyManagers: true },
  { href: '/profile', label: 'Profile' },
  // The console asks for a platform key of its own (docs/operators/web-ui.md): the session does not open it.
  { href: '/platform', label: 'Operator console', platformAdmins: true },
];

/** The frame of every signed-in page: who and where, the navigation, and the page itself. */
export function Layout({ children }: { children: ComponentChildren }) {
  const { path } = useLocation();
  const answer = session.value;
  if (!answer) return null;
  const items = NAV.filter(
    (item) =>
      (!item.keyManagers || canManageKeys(answer)) &&
      (!item.module || answer.tenant.entitlements.includes(item.module)) &&
      (!item.platformAdmins || answer.user.role === 'PLATFORM_ADMIN'),
  );
  const current = (item: NavItem) =>
    item.prefix ? path === item.href || path.startsWith(`${item.prefix}/`) : path === item.href;
  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href="/">
          <span class="brand-mark" aria-hidden="true">
            h
          </span>
          hubgate
        </a>
        <span class="topbar-tenant" title="Your organization">
          <bdi>{answer.tenant.name}</bdi>
        </span>
        <div class="topbar-user">
          <span class="topbar-email">
            {answer.user.email}
            <span class="muted"> · {roleName(answer.user.role)}</span>
          </span>
          <button type="button" class="button button-quiet" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <nav class="sidenav" aria-label="Main">
        <ul>
          {items.map((item) => (
            <li key={item.href}>
              <a href={item.href} aria-current={current(item) ? 'page' : undefined}>
                {item.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" class="content" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

/** Pages for people who are not signed in (sign-in, setup): centred, no navigation. */
export function BareLayout({ children }: { children: ComponentChildren }) {
  return (
    <main id="main" class="bare" tabIndex={-1}>
      <div class="bare-brand" aria-hidden="true">
        <span class="brand-mark">h</span>
        hubgate
      </div>
      {children}
    </main>
  );
}

/** The page's one `<h1>`, a sentence saying what the page is for, and its main actions. */
export function PageHeader({
  title,
  description,
  actions,
  back,
}: {
  title: string;
  description?: ComponentChildren;
  actions?: ComponentChildren;
  back?: { href: string; label: string };
}) {
  useTitle(title);
  return (
    <header class="page-header">
      <div>
        {back ? (
          <a class="back-link" href={back.href}>
            ← {back.label}
          </a>
        ) : null}
        <h1>{title}</h1>
        {description ? <p class="page-description">{description}</p> : null}
      </div>
      {actions ? <div class="page-actions">{actions}</div> : null}
    </header>
  );
}

/** Loads a page's data again; says so while it does. */
export function RefreshButton({ loading, onRefresh }: { loading: boolean; onRefresh: () => void }) {
  return (
    <button type="button" class="button" onClick={onRefresh} disabled={loading} aria-busy={loading}>
      {loading ? 'Refreshing…' : 'Refresh'}
    </button>
  );
}
