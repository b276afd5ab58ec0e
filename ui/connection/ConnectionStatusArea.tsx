import type { Connection } from '../api-types.js';
import { ConnectionSummary } from '../components/ConnectionSummary.js';
import { NO_FILTERS } from './logFilters.js';
import { PageNotice } from './PageNotice.js';
import { connectionPage } from './paths.js';
import { PausedBanner } from './PausedBanner.js';
import { TestEventResult } from './TestEventResult.js';
import type { ConnectionPage } from './useConnectionPage.js';

/**
 * Above the log: what just happened, the test event's outcome, why the connection is paused, and what
 * the connection is.
 */
export function ConnectionStatusArea({
  page,
  connection,
  connectorName,
  canOperate,
  detailHref,
}: {
  page: ConnectionPage;
  connection: Connection;
  connectorName: string;
  canOperate: boolean;
  detailHref: (deliveryId: string) => string;
}) {
  return (
    <>
      <PageNotice notice={page.notice} noticeRef={page.noticeRef} onDismiss={() => page.setNotice(null)} />
      <TestEventResult state={page.test.state} detailHref={detailHref} onDismiss={page.test.dismiss} />
      {connection.status === 'paused' ? (
        <PausedBanner
          connection={connection}
          skipped={page.skipped.data}
          canOperate={canOperate}
          onResume={() => page.setOpen('resume')}
          skippedHref={connectionPage(connection.id, { ...NO_FILTERS, status: ['skipped'] })}
          failedHref={connectionPage(connection.id, { ...NO_FILTERS, status: ['failed'] })}
        />
      ) : null}
      <ConnectionSummary
        connection={connection}
        connector={connectorName}
        onBind={canOperate ? () => page.setOpen('bind') : undefined}
      />
    </>
  );
}
