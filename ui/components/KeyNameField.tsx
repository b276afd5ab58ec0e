import type { RefObject } from 'preact';
import { Field } from './Field.js';
import { KEY_NAME_MAX } from './keyCreateErrors.js';

/** A new key's name: what uses the key. */
export function KeyNameField({
  value,
  onInput,
  error,
  inputRef,
}: {
  value: string;
  onInput: (value: string) => void;
  error: string | undefined;
  inputRef: RefObject<HTMLInputElement | null>;
}) {
  return (
    <Field
      label="Name"
      hint={`What uses the key, e.g. “ci deploy”. At most ${KEY_NAME_MAX} characters.`}
      error={error}
    >
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          ref={inputRef}
          type="text"
          autoComplete="off"
          maxLength={KEY_NAME_MAX}
          required
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}
