import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { EmptyState } from '../components/EmptyState.js';
import { PageHeader } from '../components/PageHeader.js';
import { PlatformKeyPage } from './components/PlatformKeyPage.js';
import { PlatformLayout } from './components/PlatformLayout.js';
import { platformKey } from './key.js';
import { ChannelsPage } from './pages/Channels.js';
import { MonitoringPage } from './pages/Monitoring.js';
import { RulesPage } from './pages/Rules.js';
import { TenantsPage } from './pages/Tenants.js';

/** Whether a path is the operator console's (contract §12): `/platform` and everything under it. */
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

function pageFor(path: string) {
  switch (path.replace(/\/+$/, '') || '/') {
    case '/platform':
      return <MonitoringPage />;
    case '/platform/tenants':
      return <TenantsPage />;
    case '/platform/alerting/channels':
      return <ChannelsPage />;
    case '/platform/alerting/rules':
      return <RulesPage />;
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
