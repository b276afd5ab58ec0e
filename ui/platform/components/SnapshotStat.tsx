import type { ComponentChildren } from 'preact';

/** One figure of the snapshot, with its label; `tone` when it is bad news. */
export function SnapshotStat({
  label,
  children,
  tone,
}: {
  label: string;
  children: ComponentChildren;
  tone?: 'bad' | 'warn';
}) {
  return (
    <div class={tone ? `stat platform-stat stat-${tone}` : 'stat platform-stat'}>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}
