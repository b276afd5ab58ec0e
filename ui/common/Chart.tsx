// A time-series chart (uPlot) in the page's own colours and fonts, light or dark, as wide as its box,
// with a heading and a sentence that is also its description: the console's monitoring and the
// tenant's usage draw theirs with it.
import type { RefObject } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

// The options of a uPlot chart in the page's own colours and fonts.

/** A colour of the page (a CSS custom property of styles.css), read when the chart is drawn. */
export type ChartColour = '--good' | '--bad' | '--accent' | '--busy' | '--warn';

export interface ChartSeries {
  label: string;
  colour: ChartColour;
  values: (number | null)[];
  /** A dash pattern, so that two lines differ by more than their colour (and in the legend). */
  dash?: number[];
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

// Whole days (1, 2, 7, 14, 28 days), in seconds: the ticks of a chart of days.
const DAY_STEPS = [1, 2, 7, 14, 28].map((days) => days * 86_400);

// Whole steps for counts: a queue of 3 is never drawn at 2.5.
const WHOLE = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6];

/** What a chart shows and how its values read. */
interface ChartLook {
  yLabel: string;
  /** What one point is ("Minute", "Day") and how its time reads in the legend (uPlot's template). */
  x?: {
    label: string;
    value: string;
    utc?: boolean;
    /** Ticks at whole days only ("Dec 5"): a chart of days has no hours to mark. */
    days?: boolean;
  };
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
  const x = look.x ?? { label: 'Minute', value: '{YYYY}-{MM}-{DD} {HH}:{mm}' };
  return {
    width,
    height: HEIGHT,
    // Days and hours of usage are UTC's (the API counts them so), whatever the browser's zone.
    ...(x.utc ? { tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC') } : {}),
    series: [
      { label: x.label, value: x.value },
      ...series.map((s): uPlot.Series => ({
        label: s.label,
        stroke: colour(s.colour),
        width: 2,
        ...(s.dash ? { dash: s.dash } : {}),
        points: { size: 6, show: true, filter: isolated, fill: colour(s.colour) },
        value: (_u, v) => (v === null || v === undefined ? '—' : format(v)),
      })),
    ],
    axes: [
      {
        ...axis,
        label: look.x ? x.label : 'Time',
        labelSize: 20,
        ...(x.days ? { incrs: DAY_STEPS, values: '{MMM} {D}' } : {}),
      },
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
  const shape = series.map((s) => `${s.label}:${s.colour}:${s.dash?.join(',') ?? ''}`).join('|');

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
  }, [shape, look.yLabel, look.x?.label]);

  useEffect(() => {
    plot.current?.setData(data);
    // `data` is new at every render; the arrays it holds are what matter.
  }, [times, ...series.map((s) => s.values)]);
}

/**
 * One time-series chart (uPlot) with its heading and a sentence for people who cannot see it.
 * Drawn in the page's colours and drawn again when the colour scheme changes; as wide as its box.
 */
export function ChartPanel({
  title,
  summary,
  yLabel,
  times,
  series,
  format,
  whole = false,
  ticks,
  x,
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
  x?: ChartLook['x'];
}) {
  const id = useId();
  const box = useRef<HTMLDivElement>(null);
  useUplot(box, times, series, { yLabel, format, whole, ...(ticks ? { ticks } : {}), ...(x ? { x } : {}) });

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
