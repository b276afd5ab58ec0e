import type { RefObject } from 'preact';
import { Field } from './Field.js';

export const PASSKEY_NAME_MAX = 100;

/** A new passkey's optional name; read-only while the browser asks. */
export function PasskeyNameField({
  value,
  onInput,
  error,
  readOnly,
  inputRef,
}: {
  value: string;
  onInput: (value: string) => void;
  error: string | undefined;
  readOnly: boolean;
  inputRef: RefObject<HTMLInputElement | null>;
}) {
  return (
    <Field
      label="Name (optional)"
      hint="Something that tells it apart, like “Work laptop”. Left empty, hubgate names it after the authenticator when it can tell which one it is."
      error={error}
    >
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          ref={inputRef}
          type="text"
          autoComplete="off"
          maxLength={PASSKEY_NAME_MAX}
          value={value}
          readOnly={readOnly}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}
