import type { ComponentChildren } from 'preact';
import type { AuditEntryRecord } from '../api-types.js';
import { formatDate, formatPreciseDate, moduleName, plural, roleName } from '../format.js';
import { scopeSummary } from './KeyScopeList.js';

const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const timeOnly = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' });

/** The actions hubgate records (`grep -rn "action: '" src`), in words; others show as they are. */
const ACTIONS: Record<string, string> = {
  'sign_in.success': 'Signed in',
  'sign_in.failure': 'Sign-in failed',
  'setup.complete': 'Set up hubgate',
  'api_key.create': 'Created an API key',
  'api_key.rotate': 'Rotated an API key',
  'api_key.revoke': 'Revoked an API key',
  'connection.create': 'Created a connection',
  'connection.revoke': 'Revoked a connection',
  'connection.credentials.bind': 'Bound credentials to a connection',
  'passkey.create': 'Added a passkey',
  'passkey.add': 'Added a passkey',
  'passkey.delete': 'Removed a passkey',
  'passkey.remove': 'Removed a passkey',
  'user.password_sign_in.update': 'Changed password sign-in',
  'password_sign_in.update': 'Changed password sign-in',
  'tenant.create': 'Created the organization',
  'tenant.entitlements.update': 'Changed the organization’s modules',
  'user.create': 'Added a user',
  'platform_key.create': 'Created a platform key',
  'platform_key.revoke': 'Revoked a platform key',
  'alerting.channel.create': 'Created an alerting channel',
  'alerting.channel.update': 'Changed an alerting channel',
  'alerting.channel.delete': 'Deleted an alerting channel',
  'alerting.rules.replace': 'Replaced the alert routing rules',
};

const ACTORS: Record<string, string> = {
  user: 'User',
  anonymous: 'Not signed in',
  tenant_key: 'API key',
  platform_key: 'Platform key',
  cli: 'Command line',
  system: 'hubgate',
};

const TARGETS: Record<string, string> = {
  api_key: 'API key',
  connection: 'Connection',
  session: 'Session',
  user: 'User',
  tenant: 'Organization',
  platform_key: 'Platform key',
  passkey: 'Passkey',
  alert_channel: 'Alerting channel',
  alert_routing: 'Alert routing',
};

const METHODS: Record<string, string> = {
  password: 'with a password',
  passkey: 'with a passkey',
  sso: 'with single sign-on',
};

const isText = (value: unknown): value is string | number | boolean =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
const textList = (value: unknown): string[] | null =>
  Array.isArray(value) && value.every(isText) ? value.map(String) : null;
const modules = (value: unknown): string => {
  const list = textList(value);
  return list ? (list.length ? list.map(moduleName).join(', ') : 'none') : '';
};
const span = (seconds: number): string =>
  seconds % 3600 === 0 ? plural(seconds / 3600, 'hour') : plural(Math.round(seconds / 60), 'minute');

/** A few facts of the entry's metadata, in words, in one line; never the raw JSON. */
function facts(metadata: Record<string, unknown>): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  const seen = new Set<string>();
  const fact = (name: string, say: (value: unknown) => ComponentChildren | null) => {
    seen.add(name);
    if (!(name in metadata)) return;
    const said = say(metadata[name]);
    if (said !== null && said !== '') out.push(said);
  };
  fact('name', (v) => (isText(v) ? `“${v}”` : null));
  fact('displayName', (v) => (isText(v) ? `“${v}”` : null));
  fact('organizationName', (v) => (isText(v) ? `“${v}”` : null));
  fact('email', (v) => (isText(v) ? String(v) : null));
  fact('method', (v) => (isText(v) ? (METHODS[String(v)] ?? `with ${v}`) : null));
  fact('role', (v) => (isText(v) ? roleName(String(v)) : null));
  fact('prefix', (v) => (isText(v) ? <span class="mono">{v}…</span> : null));
  fact('scopes', (v) => (textList(v) ? scopeSummary(textList(v) ?? []) : null));
  fact('expiresAt', (v) => (typeof v === 'string' ? `expires ${dateOnly.format(new Date(v))}` : null));
  fact('previousSecretValidForSeconds', (v) =>
    typeof v === 'number' ? (v > 0 ? `old secret kept for ${span(v)}` : 'old secret stopped at once') : null,
  );
  fact('connectorKey', (v) => (isText(v) ? `${v} connector` : null));
  fact('entitlements', (v) => `modules: ${modules(v)}`);
  fact('before', () => null);
  fact('after', (v) =>
    'before' in metadata ? `modules: ${modules(metadata.before)} → ${modules(v)}` : `modules: ${modules(v)}`,
  );
  fact('fields', (v) => (textList(v) ? `credentials: ${textList(v)?.join(', ')}` : null));
  fact('generated', () => null);
  fact('previousValidUntil', (v) =>
    typeof v === 'string' ? `old credentials valid until ${formatDate(v)}` : null,
  );
  fact('cancelledDeliveries', (v) =>
    typeof v === 'number' && v > 0 ? `${plural(v, 'delivery', 'deliveries')} cancelled` : null,
  );
  fact('changedFields', (v) => (textList(v) ? `changed: ${textList(v)?.join(', ')}` : null));
  fact('config', () => null);
  fact('platformKeyPrefix', (v) =>
    isText(v) ? (
      <span>
        platform key <span class="mono">{v}…</span>
      </span>
    ) : null,
  );
  fact('platformKeyId', () => null);
  // Anything else simple is shown as "name: value"; nested objects are left out.
  for (const [name, value] of Object.entries(metadata)) {
    if (seen.has(name)) continue;
    if (isText(value)) out.push(`${name}: ${String(value)}`);
    else if (textList(value)) out.push(`${name}: ${textList(value)?.join(', ')}`);
  }
  return out;
}

function Details({ metadata }: { metadata: Record<string, unknown> }) {
  const parts = facts(metadata);
  if (parts.length === 0) return null;
  return (
    <span class="audit-details">
      {parts.map((part, i) => (
        <span key={i}>
          {i > 0 ? <span aria-hidden="true"> · </span> : null}
          {i > 0 ? <span class="visually-hidden">, </span> : null}
          {part}
        </span>
      ))}
    </span>
  );
}

function Who({ type, id, me }: { type: string; id: string | null; me: string | undefined }) {
  const you = type === 'user' && id !== null && id === me;
  return (
    <>
      <span>{you ? 'You' : (ACTORS[type] ?? type)}</span>
      {id && !you ? <span class="audit-id mono">{id}</span> : null}
    </>
  );
}

/** The moment of an entry, to the second: the day above, the time below. */
function When({ at }: { at: string }) {
  const date = new Date(at);
  return (
    <time dateTime={at} title={formatPreciseDate(at)}>
      <span class="audit-day">{dateOnly.format(date)}</span>
      <span class="audit-clock">{timeOnly.format(date)}</span>
    </time>
  );
}

/** One audit entry: when, what (with a few facts), who, on what, and where from. */
export function AuditRow({ entry, me }: { entry: AuditEntryRecord; me: string | undefined }) {
  const words = ACTIONS[entry.action];
  return (
    <tr>
      <td class="audit-time">
        <When at={entry.createdAt} />
      </td>
      <td class="audit-what">
        {words ? (
          <span class={entry.action.endsWith('.failure') ? 'audit-action audit-failure' : 'audit-action'}>
            {words}
          </span>
        ) : (
          <span class="audit-action mono">{entry.action}</span>
        )}
        <Details metadata={entry.metadata} />
      </td>
      <td>
        <Who type={entry.actorType} id={entry.actorId} me={me} />
      </td>
      <td>
        {entry.targetType ? (
          <>
            <span>{TARGETS[entry.targetType] ?? entry.targetType}</span>
            {entry.targetId ? <span class="audit-id mono">{entry.targetId}</span> : null}
          </>
        ) : (
          <span class="muted">—</span>
        )}
      </td>
      <td>
        {entry.ip ? <span class="mono audit-ip">{entry.ip}</span> : <span class="muted">No address</span>}
        {entry.requestId ? (
          <span class="audit-id mono">
            <span class="visually-hidden">Request ID </span>
            {entry.requestId}
          </span>
        ) : null}
      </td>
    </tr>
  );
}
