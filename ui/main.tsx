import { render } from 'preact';
import { App } from './app.js';
import { loadSession, watchSession } from './common/session.js';
import { isPortalPath } from './portal/session.js';
import './styles.css';

const root = document.getElementById('app');
if (root) {
  // The portal page has a session of its own (ui/portal/session.ts) and never signs anyone in.
  const tenantUi = !isPortalPath(window.location.pathname);
  if (tenantUi) watchSession();
  render(<App />, root);
  if (tenantUi) void loadSession();
}
