import type { ComponentChildren } from 'preact';

/** A list with nothing in it says what to do next. */
export function EmptyState({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <h2 class="empty-title">{title}</h2>
      {children}
    </div>
  );
}
