import type { ApiError } from '../../api.js';
import { Loading } from '../../components/Loading.js';
import { ErrorNotice, Notice } from '../../components/Notice.js';
import { MonitoringChartGrid } from './MonitoringChartGrid.js';
import type { Series, summaries } from './monitoringHistory.js';

/** The history under its toolbar: the charts (and a failed refresh), or why there are none yet. */
export function MonitoringHistoryBody({
  series,
  text,
  error,
}: {
  series: Series | undefined;
  text: ReturnType<typeof summaries> | undefined;
  error: ApiError | undefined;
}) {
  if (!series || !text) {
    if (!error) return <Loading what="Loading the history" />;
    return error.status === 404 ? (
      <Notice tone="warning">
        This hubgate does not keep a monitoring history yet, so there are no charts.
      </Notice>
    ) : (
      <ErrorNotice error={error} title="The history could not be loaded." />
    );
  }
  return (
    <>
      {error ? <ErrorNotice error={error} title="The charts could not be refreshed." /> : null}
      <MonitoringChartGrid series={series} text={text} />
    </>
  );
}
