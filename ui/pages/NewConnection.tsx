import { PageHeader } from '../components/PageHeader.js';

export function NewConnectionPage() {
  return <PageHeader title="NewConnection" />;
}
