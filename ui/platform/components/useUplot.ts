import type { RefObject } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { HEIGHT, optionsFor, type ChartSeries } from './chartOptions.js';

/**
 * A uPlot chart drawn into `box`: again when its shape or the colour scheme changes, resized with
 * its box, and given new data in place.
 */
export function useUplot(
  box: RefObject<HTMLDivElement | null>,
  times: number[],
  series: ChartSeries[],
  { yLabel, format, whole }: { yLabel: string; format: (value: number) => string; whole: boolean },
) {
  const plot = useRef<uPlot | null>(null);
  const data: uPlot.AlignedData = [times, ...series.map((s) => s.values)];
  const latest = useRef({ data, yLabel, series, format, whole });
  latest.current = { data, yLabel, series, format, whole };
  const shape = series.map((s) => `${s.label}:${s.colour}`).join('|');

  useEffect(() => {
    const target = box.current;
    if (!target) return;
    const draw = () => {
      plot.current?.destroy();
      const now = latest.current;
      plot.current = new uPlot(
        optionsFor(Math.max(target.clientWidth, 200), now.yLabel, now.series, now.format, now.whole),
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
  }, [shape, yLabel]);

  useEffect(() => {
    plot.current?.setData(data);
    // `data` is new at every render; the arrays it holds are what matter.
  }, [times, ...series.map((s) => s.values)]);
}
