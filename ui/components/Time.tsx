import { formatDate, formatPreciseDate, formatRelative } from '../format.js';

/** A moment, as a person reads it ("3 minutes ago"), with the exact time on hover. */
export function Time({ at, mode = 'relative' }: { at: string | null; mode?: 'relative' | 'absolute' }) {
  if (!at) return <span class="muted">—</span>;
  return (
    <time dateTime={at} title={formatPreciseDate(at)}>
      {mode === 'relative' ? formatRelative(at) : formatDate(at)}
    </time>
  );
}
