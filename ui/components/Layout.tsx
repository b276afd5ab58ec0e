import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { roleName } from '../format.js';
import { canManageKeys, session, signOut } from '../session.js';

interface NavItem {
  href: string;
  label: string;
  /** Also current for paths under it (a connection's events under Connections). */
  prefix?: string;
  keyManagers?: boolean;
}

const NAV: NavItem[] = [
  { href: '/', label: 'Overview' },
  { href: '/connections', label: 'Connections', prefix: '/connections' },
  { href: '/api-keys', label: 'API keys', keyManagers: true },
  { href: '/audit-log', label: 'Audit log', keyManagers: true },
  { href: '/profile', label: 'Profile' },
];

/** The frame of every signed-in page: who and where, the navigation, and the page itself. */
export function Layout({ children }: { children: ComponentChildren }) {
  const { path } = useLocation();
  const answer = session.value;
  if (!answer) return null;
  const items = NAV.filter((item) => !item.keyManagers || canManageKeys(answer));
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
