import { render } from 'preact';
import { App } from './app.js';
import { loadSession } from './session.js';
import './styles.css';

const root = document.getElementById('app');
if (root) {
  render(<App />, root);
  void loadSession();
}
