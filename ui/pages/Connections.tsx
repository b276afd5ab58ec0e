import { PageHeader } from '../components/PageHeader.js';

export function ConnectionsPage() {
  return <PageHeader title="Connections" />;
}
