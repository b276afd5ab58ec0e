import { PageHeader } from '../components/PageHeader.js';

export function ConnectionEventsPage() {
  return <PageHeader title="ConnectionEvents" />;
}
