// How times, counts, roles, modules and scopes read on screen (words.ts), and a time as an element.
import { dueText, formatDate, formatPreciseDate, formatRelative } from './words.js';

export * from './words.js';

/** A moment, as a person reads it ("3 minutes ago"), with the exact time on hover. */
export function Time({ at, mode = 'relative' }: { at: string | null; mode?: 'relative' | 'absolute' }) {
  if (!at) return <span class="muted">—</span>;
  return (
    <time dateTime={at} title={formatPreciseDate(at)}>
      {mode === 'relative' ? formatRelative(at) : formatDate(at)}
    </time>
  );
}

/**
 * When something is due (a retry, a first attempt): "in 4 seconds", or "shortly" once it is less than 5
 * seconds away or already past. A page that has not read the delivery again since never says a retry
 * is due "7 seconds ago".
 */
export function Due({ at }: { at: string }) {
  return (
    <time dateTime={at} title={formatPreciseDate(at)}>
      {dueText(at)}
    </time>
  );
}
