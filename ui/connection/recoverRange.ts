// The time range of "Recover failed deliveries" (contract §15): since at most 14 days back, until
// (default now), by the deliveries' created time.
import { DAY_MS, fromLocalInput, HOUR_MS } from './times.js';

export const RANGES = [
  { value: '1h', label: 'Last hour', ms: HOUR_MS },
  { value: '24h', label: 'Last 24 hours', ms: DAY_MS },
  { value: '3d', label: 'Last 3 days', ms: 3 * DAY_MS },
  { value: '7d', label: 'Last 7 days', ms: 7 * DAY_MS },
  { value: '14d', label: 'Last 14 days', ms: 14 * DAY_MS },
  { value: 'custom', label: 'Custom range…', ms: 0 },
] as const;

export type RangeChoice = (typeof RANGES)[number]['value'];

/** The API refuses a `since` more than 14 days back; a minute's room covers the time to confirm. */
export const MAX_BACK_MS = 14 * DAY_MS - 60_000;

export interface RecoverRange {
  choice: RangeChoice;
  /** datetime-local values, for a custom range. */
  since: string;
  until: string;
}

/** The range as the API takes it at `now`, or why it cannot be sent. */
export function rangeAt(
  range: RecoverRange,
  now: number,
): { since: string; until?: string } | { problem: 'since' | 'until'; message: string } {
  const preset = RANGES.find((r) => r.value === range.choice);
  if (preset && preset.value !== 'custom') {
    return { since: new Date(now - Math.min(preset.ms, MAX_BACK_MS)).toISOString() };
  }
  const since = fromLocalInput(range.since);
  const until = fromLocalInput(range.until);
  if (!since) return { problem: 'since', message: 'Enter the start of the range.' };
  if (Date.parse(since) < now - MAX_BACK_MS) {
    return { problem: 'since', message: 'Choose a start at most 14 days ago.' };
  }
  if (until && Date.parse(until) <= Date.parse(since)) {
    return { problem: 'until', message: 'Choose an end after the start.' };
  }
  return until ? { since, until } : { since };
}
