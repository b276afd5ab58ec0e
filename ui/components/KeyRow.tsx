import type { ApiKey } from '../api-types.js';
import { formatPreciseDate } from '../format.js';
import { KeyScopeList } from './KeyScopeList.js';
import { StatusBadge } from './StatusBadge.js';
import { Time } from './Time.js';

const SOON_MS = 7 * 24 * 60 * 60 * 1000;
const STATUS_WORDS: Record<ApiKey['status'], string> = {
  active: 'Active',
  expired: 'Expired',
  revoked: 'Revoked',
};

const day = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

/** A day ("Nov 24, 2026"), with the exact moment on hover. */
function Day({ at }: { at: string }) {
  return (
    <time dateTime={at} title={formatPreciseDate(at)}>
      {day.format(new Date(at))}
    </time>
  );
}

/** When an active key stops working (warning within a week); the day an expired one did. */
function Expiry({ apiKey }: { apiKey: ApiKey }) {
  if (apiKey.status === 'revoked') return <span class="muted">—</span>;
  if (apiKey.status === 'expired') {
    return (
      <span class="muted">
        <Day at={apiKey.expiresAt} />
      </span>
    );
  }
  const soon = new Date(apiKey.expiresAt).getTime() - Date.now() < SOON_MS;
  return (
    <span class={soon ? 'key-expiry key-expiry-soon' : 'key-expiry'}>
      <Time at={apiKey.expiresAt} />
      {soon ? <span class="badge badge-warn">Soon</span> : null}
    </span>
  );
}

/** One key: name and creation, prefix, scopes, status, expiry, last use, and rotate and revoke. */
export function KeyRow({
  apiKey: key,
  onRotate,
  onRevoke,
}: {
  apiKey: ApiKey;
  onRotate: (key: ApiKey) => void;
  onRevoke: (key: ApiKey) => void;
}) {
  return (
    <tr>
      <th scope="row">
        <span class="key-name">{key.name}</span>
        <span class="key-created">
          Created <Time at={key.createdAt} />
        </span>
      </th>
      <td>
        <span class="mono key-prefix">{key.prefix}…</span>
      </td>
      <td>
        <KeyScopeList scopes={key.scopes} />
      </td>
      <td>
        <StatusBadge status={key.status} label={STATUS_WORDS[key.status]} />
        {key.status === 'revoked' && key.revokedAt ? (
          <span class="key-when">
            <Day at={key.revokedAt} />
          </span>
        ) : null}
      </td>
      <td class="key-nowrap">
        <Expiry apiKey={key} />
      </td>
      <td class="key-nowrap">
        {key.lastUsedAt ? <Time at={key.lastUsedAt} /> : <span class="muted">Never</span>}
      </td>
      <td class="actions">
        {key.status === 'active' ? (
          <>
            <button type="button" class="button button-small" onClick={() => onRotate(key)}>
              Rotate<span class="visually-hidden"> {key.name}</span>
            </button>
            <button
              type="button"
              class="button button-small button-danger-quiet"
              onClick={() => onRevoke(key)}
            >
              Revoke<span class="visually-hidden"> {key.name}</span>
            </button>
          </>
        ) : null}
      </td>
    </tr>
  );
}
