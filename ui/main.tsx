import { render } from 'preact';
import { App } from './app.js';
import { loadSession, watchSession } from './common/session.js';
import { isConnectPath } from './connect/link.js';
import { isPortalPath } from './portal/session.js';
import './styles.css';

const root = document.getElementById('app');
if (root) {
  // The portal page has a session of its own (ui/portal/session.ts), the connect page none: neither
  // asks who is signed in nor signs anyone in.
  const path = window.location.pathname;
  const tenantUi = !isPortalPath(path) && !isConnectPath(path);
  if (tenantUi) watchSession();
  render(<App />, root);
  if (tenantUi) void loadSession();
}
