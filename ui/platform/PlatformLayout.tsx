// The operator console's frame: its own header and navigation, skip link and <main>, but no tenant
// or user in it.
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { useEffect } from 'preact/hooks';
import { forgetKey } from './key.js';

interface NavItem {
  href: string;
  label: string;
}

const NAV: NavItem[] = [
  { href: '/platform', label: 'Monitoring' },
  { href: '/platform/tenants', label: 'Tenants' },
  { href: '/platform/usage', label: 'Usage' },
  { href: '/platform/alerting/channels', label: 'Alerting channels' },
  { href: '/platform/alerting/rules', label: 'Routing rules' },
  { href: '/platform/oauth-providers', label: 'OAuth2 providers' },
];

/** The console's title, on its frame and on the key page. */
export function PlatformBrand({ href }: { href?: string }) {
  const inner = (
    <>
      <span class="brand-mark" aria-hidden="true">
        h
      </span>
      hubgate <span class="platform-brand-sub">operator console</span>
    </>
  );
  return href ? (
    <a class="brand" href={href}>
      {inner}
    </a>
  ) : (
    <div class="brand">{inner}</div>
  );
}

/**
 * The operator console's frame: its own header, navigation and main landmark, apart from the
 * tenant UI's (no tenant session is needed or used). "Sign out" forgets this tab's key.
 */
export function PlatformLayout({
  children,
  onSignOut,
}: {
  children: ComponentChildren;
  onSignOut: () => void;
}) {
  const { path } = useLocation();
  // Arriving from the key page (its form is gone), the page starts at its top for screen readers.
  useEffect(() => {
    if (!document.activeElement || document.activeElement === document.body)
      document.getElementById('main')?.focus({ preventScroll: true });
  }, []);
  return (
    <div class="shell platform-shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <PlatformBrand href="/platform" />
        <span class="topbar-tenant">Platform operator</span>
        <div class="topbar-user">
          <button
            type="button"
            class="button button-quiet"
            onClick={() => {
              forgetKey(null);
              onSignOut();
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <nav class="sidenav" aria-label="Console">
        <ul>
          {NAV.map((item) => (
            <li key={item.href}>
              <a href={item.href} aria-current={path === item.href ? 'page' : undefined}>
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
