import { useLocation } from 'preact-iso';
import { useMemo } from 'preact/hooks';
import { withQuery } from '../../api.js';
import { platformApi } from '../key.js';
import { HistoryRangeSelect } from './HistoryRangeSelect.js';
import { DEFAULT_RANGE, RANGES, seriesOf, summaries } from './monitoringHistory.js';
import { MonitoringHistoryBody } from './MonitoringHistoryBody.js';
import { usePlatformPoll } from './PlatformPoll.js';
import type { MonitoringHistory } from './PlatformTypes.js';

const REFRESH_MS = 30_000;

/**
 * The monitoring history (contract §12) as four charts: throughput, failure ratio, latency
 * percentiles and queue depth, over a range kept in the URL (`?minutes=`), refreshed every 30 s.
 */
export function MonitoringCharts() {
  const { query, path, route } = useLocation();
  const range = RANGES.find((r) => String(r.minutes) === query.minutes) ?? DEFAULT_RANGE;
  const history = usePlatformPoll(
    (signal) =>
      platformApi<MonitoringHistory>(
        'GET',
        withQuery('/api/v1/platform/monitoring/history', { minutes: range.minutes }),
        { signal },
      ),
    String(range.minutes),
    REFRESH_MS,
  );
  const series = useMemo(() => (history.data ? seriesOf(history.data.points) : undefined), [history.data]);
  const text = series ? summaries(series, range.words) : undefined;

  return (
    <section class="platform-history" aria-labelledby="history-title">
      <div class="log-toolbar">
        <h2 id="history-title">History</h2>
        <HistoryRangeSelect
          minutes={range.minutes}
          onChange={(minutes) =>
            route(
              withQuery(path, { minutes: minutes === String(DEFAULT_RANGE.minutes) ? null : minutes }),
              true,
            )
          }
        />
        <span class="muted platform-updated">One point per minute; refreshed every 30 seconds.</span>
      </div>
      <MonitoringHistoryBody series={series} text={text} error={history.error} />
    </section>
  );
}
