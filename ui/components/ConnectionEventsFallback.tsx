import type { ApiError } from '../api.js';
import { Loading } from './Loading.js';
import { ErrorNotice } from './Notice.js';
import { PageHeader } from './PageHeader.js';

/** The event log's page while its connection is not there: missing, failed to load, or loading. */
export function ConnectionEventsFallback({ error }: { error: ApiError | undefined }) {
  if (error?.code === 'not_found') {
    return (
      <>
        <PageHeader title="Connection not found" back={{ href: '/connections', label: 'Connections' }} />
        <section class="card card-narrow">
          <p>There is no connection at this address in your organization. It may have been mistyped.</p>
          <a class="button button-primary" href="/connections">
            Back to connections
          </a>
        </section>
      </>
    );
  }
  if (error) {
    return (
      <>
        <PageHeader title="Event log" back={{ href: '/connections', label: 'Connections' }} />
        <ErrorNotice error={error} title="The connection could not be loaded." />
      </>
    );
  }
  return (
    <>
      <PageHeader title="Event log" back={{ href: '/connections', label: 'Connections' }} />
      <Loading what="Loading the connection" />
    </>
  );
}
