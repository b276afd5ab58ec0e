import { render } from 'preact';
import { App } from './app.js';
import { loadSession, watchSession } from './common/session.js';
import './styles.css';

const root = document.getElementById('app');
if (root) {
  watchSession();
  render(<App />, root);
  void loadSession();
}
