import { Field } from './Field.js';
import { DAY_MS, isoDay, MAX_CUSTOM_DAYS } from './keyExpiry.js';

/** The day a key stops working, picked on a calendar: from today to a year ahead. */
export function KeyExpiryDate({
  value,
  onInput,
  error,
  now,
}: {
  value: string;
  onInput: (value: string) => void;
  error: string | undefined;
  now: Date;
}) {
  return (
    <Field
      label="Expiry date"
      hint="The key stops working at the end of that day (23:59, your time)."
      error={error}
    >
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          type="date"
          required
          min={isoDay(now)}
          max={isoDay(new Date(now.getTime() + MAX_CUSTOM_DAYS * DAY_MS))}
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}
