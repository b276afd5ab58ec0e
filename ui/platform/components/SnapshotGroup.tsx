import type { ComponentChildren } from 'preact';

/** A card of the snapshot's figures, with a note on what they count. */
export function SnapshotGroup({
  id,
  title,
  note,
  children,
  className,
}: {
  id: string;
  title: string;
  note?: ComponentChildren;
  children: ComponentChildren;
  className?: string;
}) {
  return (
    <section class={`card platform-group ${className ?? ''}`} aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {note ? <p class="muted platform-note">{note}</p> : null}
      <dl class="platform-stats">{children}</dl>
    </section>
  );
}
