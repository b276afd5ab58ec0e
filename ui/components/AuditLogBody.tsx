import type { AuditEntryRecord, Page } from '../api-types.js';
import { withQuery } from '../api.js';
import type { Resource } from '../hooks.js';
import { AuditTable } from './AuditTable.js';
import { EmptyState } from './EmptyState.js';
import { KeyRoleNotice } from './KeyRoleNotice.js';
import { Loading } from './Loading.js';
import { ErrorNotice } from './Notice.js';
import { Pager } from './Pager.js';

/** The audit log: not allowed, failed, loading, nothing (more) recorded, or a page of entries. */
export function AuditLogBody({
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
  if (!allowed || log.error?.code === 'role_forbidden') return <KeyRoleNotice what="read the audit log" />;
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
