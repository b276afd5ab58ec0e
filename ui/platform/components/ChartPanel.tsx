import { useId, useRef } from 'preact/hooks';
// Bundled into the one stylesheet by esbuild (no <style> element, nothing inline in the HTML).
import 'uplot/dist/uPlot.min.css';
import type { ChartSeries } from './chartOptions.js';
import { useUplot } from './useUplot.js';

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
}: {
  title: string;
  summary: string;
  yLabel: string;
  /** Seconds since the epoch, oldest first. */
  times: number[];
  series: ChartSeries[];
  format: (value: number) => string;
  whole?: boolean;
}) {
  const id = useId();
  const box = useRef<HTMLDivElement>(null);
  useUplot(box, times, series, { yLabel, format, whole });

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
