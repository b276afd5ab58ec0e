import { useId } from 'preact/hooks';
import { RuleFieldNotes } from './RuleFieldNotes.js';
import { UNITS, type Interval, type Unit } from './RuleModel.js';

/** A repeat interval as an amount and a unit (minutes, hours, days), labelled as a group. */
export function RuleInterval({
  legend,
  value,
  onChange,
  error,
  hint,
}: {
  legend: string;
  value: Interval;
  onChange: (value: Interval) => void;
  error?: string;
  hint?: string;
}) {
  const id = useId();
  const describedBy =
    [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div
      class={error ? 'field rule-interval field-invalid' : 'field rule-interval'}
      role="group"
      aria-labelledby={`${id}-legend`}
    >
      <span class="rule-interval-legend" id={`${id}-legend`}>
        {legend}
      </span>
      <div class="row">
        <label class="visually-hidden" for={`${id}-amount`}>
          {legend}: amount
        </label>
        <input
          id={`${id}-amount`}
          type="text"
          inputMode="numeric"
          class="rule-interval-amount"
          value={value.amount}
          aria-describedby={describedBy}
          aria-invalid={error ? true : undefined}
          onInput={(event) => onChange({ ...value, amount: event.currentTarget.value })}
        />
        <label class="visually-hidden" for={`${id}-unit`}>
          {legend}: unit
        </label>
        <select
          id={`${id}-unit`}
          value={value.unit}
          onChange={(event) => onChange({ ...value, unit: event.currentTarget.value as Unit })}
        >
          {UNITS.map((unit) => (
            <option key={unit.name} value={unit.name}>
              {unit.name}
            </option>
          ))}
        </select>
      </div>
      <RuleFieldNotes id={id} hint={hint} error={error} />
    </div>
  );
}
