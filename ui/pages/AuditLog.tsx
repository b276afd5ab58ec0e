import { PageHeader } from '../components/PageHeader.js';

export function AuditLogPage() {
  return <PageHeader title="AuditLog" />;
}
