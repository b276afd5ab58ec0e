import type { ApiKey } from '../api-types.js';
import { KeyRow } from './KeyRow.js';

/** The tenant's keys: what each may do, whether it works, and the actions on the working ones. */
export function KeyTable({
  keys,
  onRotate,
  onRevoke,
}: {
  keys: ApiKey[];
  onRotate: (key: ApiKey) => void;
  onRevoke: (key: ApiKey) => void;
}) {
  return (
    // Focusable, so that a keyboard can scroll it where the screen is too narrow for every column.
    <div class="table-wrap" tabIndex={0} role="region" aria-label="API keys">
      <table class="key-table">
        <caption class="visually-hidden">API keys, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col">Scopes</th>
            <th scope="col">Status</th>
            <th scope="col">Expires</th>
            <th scope="col">Last used</th>
            <th scope="col" class="actions">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <KeyRow key={key.id} apiKey={key} onRotate={onRotate} onRevoke={onRevoke} />
          ))}
        </tbody>
      </table>
    </div>
  );
}
