// The monitoring charts (docs/operators/web-ui.md): the last hour (or 3 to 24) of deliveries, failure ratio,
// latency and queue depth, drawn with uPlot in the page's colours, each with a sentence that is also
// its description.
import type { RefObject } from 'preact';
import { useEffect, useId, useMemo, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useLocation } from 'preact-iso';
import { withQuery, type ApiError } from '../../common/api.js';
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

// The options of a uPlot chart in the page's own colours and fonts.

/** A colour of the page (a CSS custom property of styles.css), read when the chart is drawn. */
type ChartColour = '--good' | '--bad' | '--accent' | '--busy' | '--warn';

interface ChartSeries {
  label: string;
  colour: ChartColour;
  values: (number | null)[];
}

const HEIGHT = 220;

/**
 * The minutes with a value and none on either side: no line reaches them, so their point is drawn
 * (a ratio or a latency measured in one minute of the hour would otherwise not show at all).
 */
function isolated(u: uPlot, seriesIndex: number): number[] | null {
  const values = u.data[seriesIndex] ?? [];
  const has = (i: number) => values[i] !== null && values[i] !== undefined;
  const found: number[] = [];
  for (let i = 0; i < values.length; i += 1) if (has(i) && !has(i - 1) && !has(i + 1)) found.push(i);
  return found;
}

// uPlot's tick length and the gap between ticks and values (its defaults), and air beyond the values.
const TICK_SIZE = 10;
const VALUE_GAP = 5;
const AIR = 6;
let measuring: CanvasRenderingContext2D | null = null;

/**
 * Room for the y axis's widest value, its ticks and a little air: uPlot's fixed size let a value such
 * as "15,000 ms" run into the axis title.
 */
function yAxisSize(font: string) {
  return (_u: uPlot, values: string[] | null): number => {
    measuring ??= document.createElement('canvas').getContext('2d');
    if (!measuring) return 72;
    measuring.font = font;
    const widest = (values ?? []).reduce((w, v) => Math.max(w, measuring?.measureText(v).width ?? 0), 0);
    return Math.ceil(widest) + TICK_SIZE + VALUE_GAP + AIR;
  };
}

// Whole steps for counts: a queue of 3 is never drawn at 2.5.
const WHOLE = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6];

/** What a chart shows and how its values read. */
interface ChartLook {
  yLabel: string;
  format: (value: number) => string;
  whole: boolean;
  /** The y axis's values, all in one unit (every value through `format` unless given). */
  ticks?: (values: number[]) => string[];
}

function optionsFor(width: number, series: ChartSeries[], look: ChartLook): uPlot.Options {
  const { yLabel, format, whole } = look;
  const ticks = look.ticks ?? ((values: number[]) => values.map(format));
  // The page's own colours, light or dark, as they are now.
  const css = getComputedStyle(document.documentElement);
  const colour = (name: string) => css.getPropertyValue(name).trim();
  const font = `12px ${colour('--font') || 'system-ui, sans-serif'}`;
  const axis: uPlot.Axis = {
    stroke: colour('--text-muted'),
    grid: { stroke: colour('--border'), width: 1 },
    ticks: { stroke: colour('--border'), width: 1 },
    font,
    labelFont: font,
  };
  return {
    width,
    height: HEIGHT,
    series: [
      { label: 'Minute', value: '{YYYY}-{MM}-{DD} {HH}:{mm}' },
      ...series.map((s): uPlot.Series => ({
        label: s.label,
        stroke: colour(s.colour),
        width: 2,
        points: { size: 6, show: true, filter: isolated, fill: colour(s.colour) },
        value: (_u, v) => (v === null || v === undefined ? '—' : format(v)),
      })),
    ],
    axes: [
      { ...axis, label: 'Time', labelSize: 20 },
      {
        ...axis,
        label: yLabel,
        labelSize: 20,
        size: yAxisSize(font),
        values: (_u, splits) => ticks(splits),
        ...(whole ? { incrs: WHOLE } : {}),
      },
    ],
    scales: {
      x: { time: true },
      // From zero always: a chart of 0–3 and one of 0–3,000 must not look alike at a glance.
      y: { range: (_u, _min, max) => uPlot.rangeNum(0, max > 0 ? max : 1, 0.1, true) },
    },
    cursor: { drag: { x: false, y: false } },
    legend: { show: true },
  };
}

/**
 * A uPlot chart drawn into `box`: again when its shape or the colour scheme changes, resized with
 * its box, and given new data in place.
 */
function useUplot(
  box: RefObject<HTMLDivElement | null>,
  times: number[],
  series: ChartSeries[],
  look: ChartLook,
) {
  const plot = useRef<uPlot | null>(null);
  const data: uPlot.AlignedData = [times, ...series.map((s) => s.values)];
  const latest = useRef({ data, series, look });
  latest.current = { data, series, look };
  const shape = series.map((s) => `${s.label}:${s.colour}`).join('|');

  useEffect(() => {
    const target = box.current;
    if (!target) return;
    const draw = () => {
      plot.current?.destroy();
      const now = latest.current;
      plot.current = new uPlot(
        optionsFor(Math.max(target.clientWidth, 200), now.series, now.look),
        now.data,
        target,
      );
    };
    draw();
    // Colours come from the stylesheet: a change of scheme draws the chart again at once.
    const scheme = window.matchMedia('(prefers-color-scheme: dark)');
    scheme.addEventListener('change', draw);
    let width = target.clientWidth;
    const resize = new ResizeObserver(() => {
      if (target.clientWidth === width) return;
      width = target.clientWidth;
      plot.current?.setSize({ width: Math.max(width, 200), height: HEIGHT });
    });
    resize.observe(target);
    return () => {
      scheme.removeEventListener('change', draw);
      resize.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [shape, look.yLabel]);

  useEffect(() => {
    plot.current?.setData(data);
    // `data` is new at every render; the arrays it holds are what matter.
  }, [times, ...series.map((s) => s.values)]);
}

/**
 * One time-series chart (uPlot) with its heading and a sentence for people who cannot see it.
 * Drawn in the page's colours and drawn again when the colour scheme changes; as wide as its box.
 */
function ChartPanel({
  title,
  summary,
  yLabel,
  times,
  series,
  format,
  whole = false,
  ticks,
}: {
  title: string;
  summary: string;
  yLabel: string;
  /** Seconds since the epoch, oldest first. */
  times: number[];
  series: ChartSeries[];
  format: (value: number) => string;
  whole?: boolean;
  ticks?: (values: number[]) => string[];
}) {
  const id = useId();
  const box = useRef<HTMLDivElement>(null);
  useUplot(box, times, series, { yLabel, format, whole, ...(ticks ? { ticks } : {}) });

  return (
    <section class="card chart-card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      <p class="chart-summary" id={`${id}-summary`}>
        {summary}
      </p>
      <div
        class="chart"
        ref={box}
        role="img"
        aria-labelledby={`${id}-title`}
        aria-describedby={`${id}-summary`}
      />
    </section>
  );
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
