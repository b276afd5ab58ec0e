// Usage (contract §24) as the tenant's usage page and the console's usage table both read it: the
// ranges offered and the query each asks for, a bucket's time in words, the sums, and saving a
// download. Days and hours are UTC's, as the API counts them.
import type { UsageBucket, UsageGranularity, UsageQuery } from './routes.js';

export interface UsageRange {
  /** In the URL: `?range=7d`. */
  key: string;
  label: string;
  /** "Last 7 days": the start of the chart's sentence. */
  words: string;
  granularity: UsageGranularity;
  /** How many buckets: hours or UTC days, the current one included. */
  buckets: number;
}

export const USAGE_RANGES: UsageRange[] = [
  { key: '24h', label: 'Last 24 hours, by hour', words: 'Last 24 hours', granularity: 'hour', buckets: 24 },
  { key: '7d', label: 'Last 7 days', words: 'Last 7 days', granularity: 'day', buckets: 7 },
  { key: '30d', label: 'Last 30 days', words: 'Last 30 days', granularity: 'day', buckets: 30 },
  { key: '90d', label: 'Last 90 days', words: 'Last 90 days', granularity: 'day', buckets: 90 },
];
const DEFAULT_RANGE = USAGE_RANGES[1]!;
export const DEFAULT_RANGE_KEY = DEFAULT_RANGE.key;

/** The range a `?range=` names; the default (7 days) for anything else. */
export const usageRange = (key: string | undefined): UsageRange =>
  USAGE_RANGES.find((r) => r.key === key) ?? DEFAULT_RANGE;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The query of a range at `now`: from the start of the first bucket to now. The API counts both ends'
 * buckets in (`to` names the last bucket by a time it holds), so the last is the current hour or UTC
 * day, still counting, and there are exactly `buckets` of them.
 */
export function usageQuery(range: UsageRange, now = Date.now()): UsageQuery {
  const size = range.granularity === 'hour' ? HOUR_MS : DAY_MS;
  const current = Math.floor(now / size) * size;
  return {
    from: new Date(current - (range.buckets - 1) * size).toISOString(),
    to: new Date(now).toISOString(),
    granularity: range.granularity,
  };
}

const dayWords = new Intl.DateTimeFormat(undefined, {
  weekday: 'short',
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  timeZone: 'UTC',
});
const hourWords = new Intl.DateTimeFormat(undefined, {
  day: 'numeric',
  month: 'short',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
  timeZone: 'UTC',
});

/** A bucket's start in words: "Mon, 7 Dec 2026" (a UTC day) or "7 Dec, 14:00 UTC" (an hour). */
export const bucketWords = (start: string, granularity: UsageGranularity): string =>
  granularity === 'hour' ? `${hourWords.format(new Date(start))} UTC` : dayWords.format(new Date(start));

/** The counts of one bucket or of a sum, as the tables' columns read them. */
export interface UsageCounts {
  eventsPublished: number;
  delivered: number;
  failed: number;
  skipped: number;
  attempts: number;
  proxyCalls: number;
  ingested: number;
}

export const countsOf = (b: UsageBucket): UsageCounts => ({
  eventsPublished: b.eventsPublished,
  delivered: b.deliveries.delivered,
  failed: b.deliveries.failed,
  skipped: b.deliveries.skipped,
  attempts: b.attempts,
  proxyCalls: b.proxyCalls,
  ingested: b.ingested,
});

export const NO_USAGE: UsageCounts = {
  eventsPublished: 0,
  delivered: 0,
  failed: 0,
  skipped: 0,
  attempts: 0,
  proxyCalls: 0,
  ingested: 0,
};

/** The sum of buckets' counts. */
export function sumUsage(buckets: readonly UsageBucket[]): UsageCounts {
  const total = { ...NO_USAGE };
  for (const bucket of buckets) {
    const counts = countsOf(bucket);
    for (const name of Object.keys(total) as (keyof UsageCounts)[]) total[name] += counts[name];
  }
  return total;
}

/** The columns of a usage table, in order, with their names. */
export const USAGE_COLUMNS: Array<{ name: keyof UsageCounts; label: string }> = [
  { name: 'eventsPublished', label: 'Events published' },
  { name: 'delivered', label: 'Delivered' },
  { name: 'failed', label: 'Failed' },
  { name: 'skipped', label: 'Skipped' },
  { name: 'attempts', label: 'Attempts' },
  { name: 'proxyCalls', label: 'Proxy calls' },
  { name: 'ingested', label: 'Ingested' },
];

export const count = (n: number): string => n.toLocaleString('en-US');

/** Saves `text` as a file named `name`, as a download the browser asks where to put (or puts away). */
export function saveFile(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has taken the file once the click is handled.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
