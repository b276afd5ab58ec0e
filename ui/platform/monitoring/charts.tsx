// The monitoring charts (docs/operators/web-ui.md): the last hour (or 3 to 24) of deliveries, failure ratio,
// latency and queue depth, drawn with uPlot in the page's colours, each with a sentence that is also
// its description.
import { useLocation } from 'preact-iso';
import { useMemo } from 'preact/hooks';
import { withQuery, type ApiError } from '../../common/api.js';
import { ChartPanel } from '../../common/Chart.js';
import { ErrorNotice, Loading, Notice } from '../../common/Notice.js';
import { routes, type HistoryPoint } from '../../common/routes.js';
import { platformApi } from '../key.js';
import { usePlatformPoll } from './poll.js';

/** The ranges offered, in minutes (the API takes 1–1,440). */
const RANGES: Array<{ minutes: number; label: string; words: string }> = [
  { minutes: 60, label: '1 hour', words: 'Last hour' },
  { minutes: 180, label: '3 hours', words: 'Last 3 hours' },
  { minutes: 360, label: '6 hours', words: 'Last 6 hours' },
  { minutes: 720, label: '12 hours', words: 'Last 12 hours' },
  { minutes: 1440, label: '24 hours', words: 'Last 24 hours' },
];
const DEFAULT_RANGE = RANGES[0]!;

const count = (n: number) => Math.round(n).toLocaleString('en-US');
// Ten seconds and more (a retried delivery's latency) read as seconds: "305 s", not "305,012 ms".
const seconds = (n: number) => `${(n / 1000).toLocaleString('en-US', { maximumFractionDigits: 1 })} s`;
export const ms = (n: number) =>
  n >= 10_000 ? seconds(n) : `${n < 10 ? n.toFixed(1).replace(/\.0$/, '') : count(n)} ms`;
/** An axis of latencies in one unit: seconds when its top value is 10 s or more. */
const msTicks = (values: number[]) =>
  Math.max(0, ...values) >= 10_000 ? values.map(seconds) : values.map(ms);
const percent = (n: number) => `${n < 10 ? n.toFixed(1).replace(/\.0$/, '') : Math.round(n)} %`;

const lastOf = <T,>(values: (T | null)[]): T | null => {
  for (let i = values.length - 1; i >= 0; i -= 1) if (values[i] !== null) return values[i] ?? null;
  return null;
};
const maxOf = (values: (number | null)[]): number | null =>
  values.reduce<number | null>((max, v) => (v === null ? max : max === null || v > max ? v : max), null);

interface Series {
  times: number[];
  delivered: number[];
  failed: number[];
  ratio: (number | null)[];
  p50: (number | null)[];
  p95: (number | null)[];
  p99: (number | null)[];
  queue: (number | null)[];
}

function seriesOf(points: HistoryPoint[]): Series {
  return {
    times: points.map((p) => Date.parse(p.at) / 1000),
    delivered: points.map((p) => p.delivered),
    failed: points.map((p) => p.failed),
    ratio: points.map((p) =>
      p.delivered + p.failed === 0 ? null : (100 * p.failed) / (p.delivered + p.failed),
    ),
    p50: points.map((p) => p.latencyMs.p50),
    p95: points.map((p) => p.latencyMs.p95),
    p99: points.map((p) => p.latencyMs.p99),
    queue: points.map((p) => p.queueDepth),
  };
}

/** One sentence per chart: what a person looking at it would take away. */
function summaries(s: Series, words: string) {
  const delivered = s.delivered.reduce((a, b) => a + b, 0);
  const failed = s.failed.reduce((a, b) => a + b, 0);
  const ended = delivered + failed;
  const p95 = maxOf(s.p95);
  const latest = s.p50.length ? lastIndex(s.p50) : -1;
  const deepest = maxOf(s.queue);
  const queueNow = lastOf(s.queue);
  return {
    throughput: ended
      ? `${words}: ${count(delivered)} delivered, ${count(failed)} failed.`
      : `${words}: no delivery ended.`,
    ratio: ended
      ? `${words}: ${percent((100 * failed) / ended)} of the deliveries that ended failed (${count(failed)} of ${count(ended)}); worst minute ${percent(maxOf(s.ratio) ?? 0)}.`
      : `${words}: no delivery ended, so there is no failure ratio.`,
    latency:
      p95 === null || latest < 0
        ? `${words}: no delivery was measured.`
        : `${words}: latency p95 up to ${ms(p95)}; latest measured minute p50 ${ms(s.p50[latest] ?? 0)}, p95 ${ms(s.p95[latest] ?? 0)}, p99 ${ms(s.p99[latest] ?? 0)}.`,
    queue:
      deepest === null
        ? `${words}: the queue was not sampled.`
        : `${words}: at most ${count(deepest)} due; latest sample ${count(queueNow ?? 0)}.`,
  };
}

function lastIndex(values: (number | null)[]): number {
  for (let i = values.length - 1; i >= 0; i -= 1) if (values[i] !== null) return i;
  return -1;
}

/** The four charts of the history: throughput, failure ratio, latency percentiles, queue depth. */
function MonitoringChartGrid({ series, text }: { series: Series; text: ReturnType<typeof summaries> }) {
  return (
    <div class="chart-grid">
      <ChartPanel
        title="Throughput"
        summary={text.throughput}
        yLabel="Deliveries per minute"
        times={series.times}
        series={[
          { label: 'Delivered', colour: '--good', values: series.delivered },
          { label: 'Failed', colour: '--bad', values: series.failed },
        ]}
        format={count}
        whole
      />
      <ChartPanel
        title="Failure ratio"
        summary={text.ratio}
        yLabel="Failed, % of ended"
        times={series.times}
        series={[{ label: 'Failed', colour: '--bad', values: series.ratio }]}
        format={percent}
      />
      <ChartPanel
        title="Latency"
        summary={text.latency}
        yLabel="Publish to delivered"
        times={series.times}
        series={[
          { label: 'p50', colour: '--accent', values: series.p50 },
          { label: 'p95', colour: '--busy', values: series.p95 },
          { label: 'p99', colour: '--warn', values: series.p99 },
        ]}
        format={ms}
        ticks={msTicks}
      />
      <ChartPanel
        title="Queue depth"
        summary={text.queue}
        yLabel="Deliveries due"
        times={series.times}
        series={[{ label: 'Due', colour: '--accent', values: series.queue }]}
        format={count}
        whole
      />
    </div>
  );
}

/** The range of the history's charts, in minutes. */
function HistoryRangeSelect({ minutes, onChange }: { minutes: number; onChange: (minutes: string) => void }) {
  return (
    <label>
      Range{' '}
      <select
        class="select-inline"
        value={String(minutes)}
        onChange={(event) => onChange(event.currentTarget.value)}
      >
        {RANGES.map((r) => (
          <option key={r.minutes} value={String(r.minutes)}>
            {r.label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The history under its toolbar: the charts (and a failed refresh), or why there are none yet. */
function MonitoringHistoryBody({
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

const REFRESH_MS = 30_000;

/**
 * The monitoring history (docs/operators/web-ui.md) as four charts: throughput, failure ratio, latency
 * percentiles and queue depth, over a range kept in the URL (`?minutes=`), refreshed every 30 s.
 */
export function MonitoringCharts() {
  const { query, path, route } = useLocation();
  const range = RANGES.find((r) => String(r.minutes) === query.minutes) ?? DEFAULT_RANGE;
  const history = usePlatformPoll(
    (signal) => platformApi(routes.platform.history, { query: { minutes: range.minutes }, signal }),
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
