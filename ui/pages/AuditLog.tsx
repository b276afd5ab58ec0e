import { useLocation } from 'preact-iso';
import { api, withQuery } from '../api.js';
import type { AuditEntryRecord, Page } from '../api-types.js';
import { AuditTable } from '../components/AuditTable.js';
import { EmptyState } from '../components/EmptyState.js';
import { KeyRoleNotice } from '../components/KeyRoleNotice.js';
import { Loading } from '../components/Loading.js';
import { ErrorNotice } from '../components/Notice.js';
import { PageHeader } from '../components/PageHeader.js';
import { Pager } from '../components/Pager.js';
import { useResource } from '../hooks.js';
import { canManageKeys, session } from '../session.js';

/** The tenant's audit log (contract §12): who did what, when and from where, newest first. */
export function AuditLogPage() {
  const { query } = useLocation();
  const cursor = query.cursor || null;
  const allowed = canManageKeys(session.value);
  const log = useResource(
    (signal) =>
      allowed
        ? api<Page<AuditEntryRecord>>('GET', withQuery('/api/v1/company/audit-log', { cursor }), { signal })
        : Promise.resolve({ data: [], nextCursor: null }),
    `${allowed}:${cursor ?? ''}`,
  );

  let body;
  if (!allowed || log.error?.code === 'role_forbidden') body = <KeyRoleNotice what="read the audit log" />;
  else if (log.error) body = <ErrorNotice error={log.error} title="The audit log could not be loaded." />;
  else if (!log.data) body = <Loading what="Loading the audit log" />;
  else if (log.data.data.length === 0) {
    body = (
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
  } else {
    body = (
      <>
        <AuditTable entries={log.data.data} me={session.value?.user.id} />
        <Pager
          cursor={cursor}
          nextCursor={log.data.nextCursor}
          hrefFor={(next) => withQuery('/audit-log', { cursor: next })}
          label="Pages of the audit log"
        />
      </>
    );
  }

  return (
    <>
      <PageHeader
        title="Audit log"
        description="Who did what in your organization, and when. Newest first."
        actions={
          allowed ? (
            <button
              type="button"
              class="button"
              onClick={log.reload}
              disabled={log.loading}
              aria-busy={log.loading}
            >
              {log.loading ? 'Refreshing…' : 'Refresh'}
            </button>
          ) : undefined
        }
      />
      {body}
    </>
  );
}
