// The options of a uPlot chart in the page's own colours and fonts.
import uPlot from 'uplot';

/** A colour of the page (a CSS custom property of styles.css), read when the chart is drawn. */
export type ChartColour = '--good' | '--bad' | '--accent' | '--busy' | '--warn';

export interface ChartSeries {
  label: string;
  colour: ChartColour;
  values: (number | null)[];
}

export const HEIGHT = 220;

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

// Whole steps for counts: a queue of 3 is never drawn at 2.5.
const WHOLE = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6];

export function optionsFor(
  width: number,
  yLabel: string,
  series: ChartSeries[],
  format: (value: number) => string,
  whole: boolean,
): uPlot.Options {
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
        size: 72,
        values: (_u, splits) => splits.map((v) => format(v)),
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
