// The audit log page (docs/operators/web-ui.md): the tenant's entries, newest first, a page at a time, each
// said in words: when, what (with a few facts of its metadata, never the raw JSON), who, on what,
// from where.
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { api, withQuery } from '../common/api.js';
import {
  formatDate,
  formatPreciseDate,
  moduleName,
  plural,
  roleName,
  scopeSummary,
} from '../common/format.js';
import { useResource, type Resource } from '../common/hooks.js';
import { PageHeader, RefreshButton } from '../common/Layout.js';
import { EmptyState, ErrorNotice, Loading, RoleNotice } from '../common/Notice.js';
import { Pager } from '../common/Pager.js';
import { routes, type AuditEntryRecord, type Page } from '../common/routes.js';
import { canManageKeys, session } from '../common/session.js';

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

type Say = (value: unknown, metadata: Record<string, unknown>) => ComponentChildren | null;
const quoted: Say = (v) => (isText(v) ? `“${v}”` : null);
const silent: Say = () => null;

/** How each fact of an entry's metadata reads, in the order they are said; null says nothing. */
const FACTS: Array<[string, Say]> = [
  ['name', quoted],
  ['displayName', quoted],
  ['organizationName', quoted],
  ['email', (v) => (isText(v) ? String(v) : null)],
  ['method', (v) => (isText(v) ? (METHODS[String(v)] ?? `with ${v}`) : null)],
  ['role', (v) => (isText(v) ? roleName(String(v)) : null)],
  ['prefix', (v) => (isText(v) ? <span class="mono">{v}…</span> : null)],
  ['scopes', (v) => (textList(v) ? scopeSummary(textList(v) ?? []) : null)],
  ['expiresAt', (v) => (typeof v === 'string' ? `expires ${dateOnly.format(new Date(v))}` : null)],
  [
    'previousSecretValidForSeconds',
    (v) =>
      typeof v === 'number'
        ? v > 0
          ? `old secret kept for ${span(v)}`
          : 'old secret stopped at once'
        : null,
  ],
  ['connectorKey', (v) => (isText(v) ? `${v} connector` : null)],
  ['entitlements', (v) => `modules: ${modules(v)}`],
  ['before', silent],
  [
    'after',
    (v, metadata) =>
      'before' in metadata
        ? `modules: ${modules(metadata.before)} → ${modules(v)}`
        : `modules: ${modules(v)}`,
  ],
  ['fields', (v) => (textList(v) ? `credentials: ${textList(v)?.join(', ')}` : null)],
  ['generated', silent],
  [
    'previousValidUntil',
    (v) => (typeof v === 'string' ? `old credentials valid until ${formatDate(v)}` : null),
  ],
  [
    'cancelledDeliveries',
    (v) => (typeof v === 'number' && v > 0 ? `${plural(v, 'delivery', 'deliveries')} cancelled` : null),
  ],
  ['changedFields', (v) => (textList(v) ? `changed: ${textList(v)?.join(', ')}` : null)],
  ['config', silent],
  [
    'platformKeyPrefix',
    (v) =>
      isText(v) ? (
        <span>
          platform key <span class="mono">{v}…</span>
        </span>
      ) : null,
  ],
  ['platformKeyId', silent],
];
const KNOWN = new Set(FACTS.map(([name]) => name));

/** A few facts of the entry's metadata, in words, in one line; never the raw JSON. */
function facts(metadata: Record<string, unknown>): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  for (const [name, say] of FACTS) {
    const said = name in metadata ? say(metadata[name], metadata) : null;
    if (said !== null && said !== '') out.push(said);
  }
  // Anything else simple is shown as "name: value"; nested objects are left out.
  for (const [name, value] of Object.entries(metadata)) {
    if (KNOWN.has(name)) continue;
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
function AuditRow({ entry, me }: { entry: AuditEntryRecord; me: string | undefined }) {
  const words = ACTIONS[entry.action];
  return (
    <tr>
      <td class="audit-time" data-label="Time">
        <When at={entry.createdAt} />
      </td>
      <td class="audit-what" data-label="Action and details">
        {words ? (
          <span class={entry.action.endsWith('.failure') ? 'audit-action audit-failure' : 'audit-action'}>
            {words}
          </span>
        ) : (
          <span class="audit-action mono">{entry.action}</span>
        )}
        <Details metadata={entry.metadata} />
      </td>
      <td data-label="Actor">
        <Who type={entry.actorType} id={entry.actorId} me={me} />
      </td>
      <td data-label="Target">
        {entry.targetType ? (
          <>
            <span>{TARGETS[entry.targetType] ?? entry.targetType}</span>
            {entry.targetId ? <span class="audit-id mono">{entry.targetId}</span> : null}
          </>
        ) : (
          <span class="muted">—</span>
        )}
      </td>
      <td data-label="IP address and request ID">
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

/** The tenant's audit entries, newest first: when, what, who, on what, and where from. */
function AuditTable({ entries, me }: { entries: AuditEntryRecord[]; me: string | undefined }) {
  return (
    <div class="table-wrap audit-wrap" tabIndex={0} role="region" aria-label="Audit log entries">
      <table class="audit-table cards-on-phone">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Action and details</th>
            <th scope="col">Actor</th>
            <th scope="col">Target</th>
            <th scope="col">IP address and request ID</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => (
            <AuditRow key={entry.id} entry={entry} me={me} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The audit log: not allowed, failed, loading, nothing (more) recorded, or a page of entries. */
function AuditLogBody({
  allowed,
  log,
  cursor,
  me,
}: {
  allowed: boolean;
  log: Resource<Page<AuditEntryRecord>>;
  cursor: string | null;
  me: string | undefined;
}) {
  if (!allowed || log.error?.code === 'role_forbidden') return <RoleNotice what="read the audit log" />;
  if (log.error) return <ErrorNotice error={log.error} title="The audit log could not be loaded." />;
  if (!log.data) return <Loading what="Loading the audit log" />;
  if (log.data.data.length === 0) {
    return (
      <EmptyState title={cursor ? 'No older entries' : 'Nothing recorded yet'}>
        <p>
          Sign-ins, API key and connection changes, and changes to your organization are recorded here with
          who made them, when, and from which address.
        </p>
        {cursor ? (
          <a class="button" href="/audit-log">
            Back to the newest entries
          </a>
        ) : null}
      </EmptyState>
    );
  }
  return (
    <>
      <AuditTable entries={log.data.data} me={me} />
      <Pager
        cursor={cursor}
        nextCursor={log.data.nextCursor}
        hrefFor={(next) => withQuery('/audit-log', { cursor: next })}
        label="Pages of the audit log"
      />
    </>
  );
}

/** The tenant's audit log (docs/operators/web-ui.md): who did what, when and from where, newest first. */
export function AuditLogPage() {
  const { query } = useLocation();
  const cursor = query.cursor || null;
  const allowed = canManageKeys(session.value);
  const log = useResource(
    (signal) =>
      allowed
        ? api(routes.audit.list, { query: { cursor }, signal })
        : Promise.resolve({ data: [], nextCursor: null }),
    `${allowed}:${cursor ?? ''}`,
  );
  return (
    <>
      <PageHeader
        title="Audit log"
        description="Who did what in your organization, and when. Newest first."
        actions={allowed ? <RefreshButton loading={log.loading} onRefresh={log.reload} /> : undefined}
      />
      <AuditLogBody allowed={allowed} log={log} cursor={cursor} me={session.value?.user.id} />
    </>
  );
}
