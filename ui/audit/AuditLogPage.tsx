// The audit log page (docs/operators/web-ui.md): the tenant's entries, newest first, a page at a time, each
// said in words: when, what (with a few facts of its metadata, never the raw JSON), who, on what,
// from where.
import { useLocation } from 'preact-iso';
import { api, withQuery } from '../common/api.js';
import { formatPreciseDate } from '../common/format.js';
import { useResource, type Resource } from '../common/hooks.js';
import { PageHeader, RefreshButton } from '../common/Layout.js';
import { EmptyState, ErrorNotice, Loading, RoleNotice } from '../common/Notice.js';
import { Pager } from '../common/Pager.js';
import { routes, type AuditEntryRecord, type Page } from '../common/routes.js';
import { canManageKeys, session } from '../common/session.js';
import { Details } from './details.js';
import { actionWords, ACTOR_WORDS, TARGET_WORDS } from './words.js';

const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const timeOnly = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' });

function Who({ type, id, me }: { type: string; id: string | null; me: string | undefined }) {
  const you = type === 'user' && id !== null && id === me;
  return (
    <>
      <span>{you ? 'You' : (ACTOR_WORDS[type] ?? type)}</span>
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
  const words = actionWords(entry.action);
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
        <Details action={entry.action} metadata={entry.metadata} />
      </td>
      <td data-label="Actor">
        <Who type={entry.actorType} id={entry.actorId} me={me} />
      </td>
      <td data-label="Target">
        {entry.targetType ? (
          <>
            <span>{TARGET_WORDS[entry.targetType] ?? entry.targetType}</span>
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
