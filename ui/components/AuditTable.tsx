import type { AuditEntryRecord } from '../api-types.js';
import { AuditRow } from './AuditRow.js';

/** The tenant's audit entries, newest first: when, what, who, on what, and where from. */
export function AuditTable({ entries, me }: { entries: AuditEntryRecord[]; me: string | undefined }) {
  return (
    <div class="table-wrap audit-wrap" tabIndex={0} role="region" aria-label="Audit log entries">
      <table class="audit-table">
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
