/** A figure that may be unknown (the database did not answer): a dash that says so. */
export function SnapshotFigure({ value, show }: { value: number | null; show: (n: number) => string }) {
  return value === null ? <span title="Unknown: the database did not answer">—</span> : <>{show(value)}</>;
}
