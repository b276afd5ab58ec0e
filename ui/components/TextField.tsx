import type { ComponentChildren } from 'preact';
import { Field } from './Field.js';

/** A labelled text input (text, e-mail, password) with its hint and error: `Field` with the input. */
export function TextField({
  label,
  hint,
  error,
  value,
  onValue,
  type,
  name,
  autoComplete,
  required,
  minLength,
  maxLength,
}: {
  label: ComponentChildren;
  hint?: ComponentChildren;
  error?: string;
  value: string;
  onValue: (value: string) => void;
  type: 'text' | 'email' | 'password';
  name?: string;
  autoComplete?: string;
  required?: boolean;
  minLength?: number;
  maxLength?: number;
}) {
  return (
    <Field label={label} hint={hint} error={error}>
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          // Preact types inputs as a union keyed by `type`; these three take the same attributes.
          type={type as 'text'}
          name={name}
          autoComplete={autoComplete}
          required={required}
          minLength={minLength}
          maxLength={maxLength}
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          onInput={(event) => onValue(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}
