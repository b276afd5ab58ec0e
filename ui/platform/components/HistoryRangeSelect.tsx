import { RANGES } from './monitoringHistory.js';

/** The range of the history's charts, in minutes. */
export function HistoryRangeSelect({
  minutes,
  onChange,
}: {
  minutes: number;
  onChange: (minutes: string) => void;
}) {
  return (
    <label>
      Range{' '}
      <select
        class="select-inline"
        value={String(minutes)}
        onChange={(event) => onChange(event.currentTarget.value)}
      >
        {RANGES.map((r) => (
          <option key={r.minutes} value={String(r.minutes)}>
            {r.label}
          </option>
        ))}
      </select>
    </label>
  );
}
