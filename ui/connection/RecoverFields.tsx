import { Field } from '../components/Field.js';
import { RANGES, type RangeChoice } from './recoverRange.js';
import { timeZoneName, toLocalInput } from './times.js';
import { type Recover, type RecoverStatus } from './useRecover.js';

const STATUS_WORDS: Record<RecoverStatus, { label: string; hint: string }> = {
  failed: { label: 'Failed', hint: 'Every attempt failed, or the receiver answered 410 Gone.' },
  skipped: { label: 'Skipped while paused', hint: 'Kept, not sent, while the connection was paused.' },
};

/** A custom range: from (at most 14 days back) and to (empty: now), in the browser's time zone. */
function CustomRange({ state }: { state: Recover }) {
  const { range, setRange, problem } = state;
  const now = Date.now();
  return (
    <div class="range-fields">
      <Field label="From" error={problem?.problem === 'since' ? problem.message : undefined}>
        {({ id, describedBy, invalid }) => (
          <input
            id={id}
            type="datetime-local"
            required
            min={toLocalInput(now - 14 * 24 * 3600 * 1000 + 60_000)}
            max={toLocalInput(now)}
            value={range.since}
            aria-describedby={describedBy}
            aria-invalid={invalid || undefined}
            onChange={(event) => setRange({ since: event.currentTarget.value })}
          />
        )}
      </Field>
      <Field
        label="To (optional)"
        hint={`Empty: until now. Times are in ${timeZoneName()}.`}
        error={problem?.problem === 'until' ? problem.message : undefined}
      >
        {({ id, describedBy, invalid }) => (
          <input
            id={id}
            type="datetime-local"
            value={range.until}
            aria-describedby={describedBy}
            aria-invalid={invalid || undefined}
            onChange={(event) => setRange({ until: event.currentTarget.value })}
          />
        )}
      </Field>
    </div>
  );
}

/** The range (a preset or custom) and the statuses of the deliveries to send again. */
export function RecoverFields({ state }: { state: Recover }) {
  const { range, setRange, statuses, toggleStatus } = state;
  return (
    <>
      <Field label="Created in" hint="Up to 14 days back.">
        {({ id, describedBy }) => (
          <select
            id={id}
            aria-describedby={describedBy}
            value={range.choice}
            onChange={(event) => setRange({ choice: event.currentTarget.value as RangeChoice })}
          >
            {RANGES.map((r) => (
              <option key={r.value} value={r.value}>
                {r.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      {range.choice === 'custom' ? <CustomRange state={state} /> : null}
      <fieldset class="choice-group">
        <legend>Deliveries to send again</legend>
        {(['failed', 'skipped'] as const).map((status) => (
          <label key={status} class="check">
            <input
              type="checkbox"
              checked={statuses.includes(status)}
              onChange={(event) => toggleStatus(status, event.currentTarget.checked)}
            />
            <span>
              {STATUS_WORDS[status].label}
              <span class="field-hint">{STATUS_WORDS[status].hint}</span>
            </span>
          </label>
        ))}
      </fieldset>
    </>
  );
}
