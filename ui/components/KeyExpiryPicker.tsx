import { Field } from './Field.js';
import { day, DAY_MS, EXPIRY_DAYS, type ExpiryValue } from './keyExpiry.js';
import { KeyExpiryDate } from './KeyExpiryDate.js';

/** When a key stops working: a number of days from now, or a day picked on a calendar. */
export function KeyExpiryPicker({
  value,
  onChange,
  error,
  currentExpiry,
}: {
  value: ExpiryValue;
  onChange: (value: ExpiryValue) => void;
  error?: string;
  /** Offers "keep the current expiry" (rotation), naming it. */
  currentExpiry?: string;
}) {
  const now = new Date();
  const dateError = value.choice === 'date' ? error : undefined;
  return (
    <div class="key-expiry-picker">
      <Field
        label={currentExpiry ? 'New expiry' : 'Expires'}
        hint="After this the key stops working. Set the shortest that suits its job; a key lasts a year at most."
        error={value.choice === 'date' ? undefined : error}
      >
        {({ id, describedBy, invalid }) => (
          <select
            id={id}
            value={value.choice}
            aria-describedby={describedBy}
            aria-invalid={invalid}
            onChange={(event) => onChange({ ...value, choice: event.currentTarget.value })}
          >
            {currentExpiry ? (
              <option value="keep">Keep the current expiry ({day.format(new Date(currentExpiry))})</option>
            ) : null}
            {EXPIRY_DAYS.map((days) => (
              <option key={days} value={String(days)}>
                In {days} days ({day.format(new Date(now.getTime() + days * DAY_MS))})
              </option>
            ))}
            <option value="date">On a day I choose…</option>
          </select>
        )}
      </Field>
      {value.choice === 'date' ? (
        <KeyExpiryDate
          value={value.date}
          onInput={(date) => onChange({ ...value, date })}
          error={dateError}
          now={now}
        />
      ) : null}
    </div>
  );
}
