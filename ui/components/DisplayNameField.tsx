import type { ApiError } from '../api.js';
import { fieldErrorText, fieldHint } from './ConnectionField.js';
import { Field } from './Field.js';

/** A new connection's display name, with the API's message about it. */
export function DisplayNameField({
  value,
  onInput,
  error,
}: {
  value: string;
  onInput: (value: string) => void;
  error: ApiError | undefined;
}) {
  return (
    <Field
      label="Display name"
      hint={fieldHint({ name: 'displayName', description: null })}
      error={fieldErrorText(error, 'displayName')}
    >
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          type="text"
          name="displayName"
          required
          maxLength={200}
          autoComplete="off"
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}
