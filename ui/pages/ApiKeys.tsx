import { PageHeader } from '../components/PageHeader.js';

export function ApiKeysPage() {
  return <PageHeader title="ApiKeys" />;
}
