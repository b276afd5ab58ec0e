import { useLocation } from 'preact-iso';
import type { AuditEntryRecord, Page } from '../api-types.js';
import { api, withQuery } from '../api.js';
import { AuditLogBody } from '../components/AuditLogBody.js';
import { PageHeader } from '../components/PageHeader.js';
import { RefreshButton } from '../components/RefreshButton.js';
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
