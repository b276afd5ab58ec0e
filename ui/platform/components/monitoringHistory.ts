// The monitoring history as the charts draw it: ranges, series per minute, and a sentence each.
import type { HistoryPoint } from './PlatformTypes.js';

/** The ranges offered, in minutes (the API takes 1–1,440). */
export const RANGES: Array<{ minutes: number; label: string; words: string }> = [
  { minutes: 60, label: '1 hour', words: 'Last hour' },
  { minutes: 180, label: '3 hours', words: 'Last 3 hours' },
  { minutes: 360, label: '6 hours', words: 'Last 6 hours' },
  { minutes: 720, label: '12 hours', words: 'Last 12 hours' },
  { minutes: 1440, label: '24 hours', words: 'Last 24 hours' },
];
export const DEFAULT_RANGE = RANGES[0]!;

export const count = (n: number) => Math.round(n).toLocaleString('en-US');
export const ms = (n: number) => `${n < 10 ? n.toFixed(1).replace(/\.0$/, '') : count(n)} ms`;
export const percent = (n: number) => `${n < 10 ? n.toFixed(1).replace(/\.0$/, '') : Math.round(n)} %`;

const lastOf = <T>(values: (T | null)[]): T | null => {
  for (let i = values.length - 1; i >= 0; i -= 1) if (values[i] !== null) return values[i] ?? null;
  return null;
};
const maxOf = (values: (number | null)[]): number | null =>
  values.reduce<number | null>((max, v) => (v === null ? max : max === null || v > max ? v : max), null);

export interface Series {
  times: number[];
  delivered: number[];
  failed: number[];
  ratio: (number | null)[];
  p50: (number | null)[];
  p95: (number | null)[];
  p99: (number | null)[];
  queue: (number | null)[];
}

export function seriesOf(points: HistoryPoint[]): Series {
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
export function summaries(s: Series, words: string) {
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
      ? `${words}: ${percent((100 * failed) / ended)} failed (${count(failed)} of ${count(ended)}); worst minute ${percent(maxOf(s.ratio) ?? 0)}.`
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
