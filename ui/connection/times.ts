// Times as `<input type="datetime-local">` takes them (local wall-clock time, to the minute) and as
// the API takes them (RFC 3339 UTC).

const pad = (n: number): string => String(n).padStart(2, '0');

/** `2026-11-27T14:05` in the browser's time zone, for a datetime-local input. */
export function toLocalInput(iso: string | number | Date): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A datetime-local value as RFC 3339 UTC; '' for an empty or unreadable one. */
export function fromLocalInput(value: string): string {
  if (!value) return '';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

/** The browser's time zone by name ("Europe/Paris", "UTC"), said beside the time fields. */
export const timeZoneName = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';

export const HOUR_MS = 3600 * 1000;
export const DAY_MS = 24 * HOUR_MS;
