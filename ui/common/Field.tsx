// Form fields with their label, hint and error wired for screen readers: any control, a text
// input, and a new password typed twice.
import type { ComponentChildren } from 'preact';
import { useId, useState } from 'preact/hooks';
import type { ApiError } from './api.js';

/**
 * A labelled form control with its hint and its error, wired for screen readers: the control is
 * described by both and marked invalid while the error shows. `children` renders the control
 * from the ids it is given.
 */
export function Field({
  label,
  hint,
  error,
  children,
}: {
  label: ComponentChildren;
  hint?: ComponentChildren;
  error?: string;
  children: (ids: { id: string; describedBy: string | undefined; invalid: boolean }) => ComponentChildren;
}) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div class={error ? 'field field-invalid' : 'field'}>
      <label for={id}>{label}</label>
      {children({ id, describedBy, invalid: Boolean(error) })}
      {hint ? (
        <p class="field-hint" id={hintId}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p class="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

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

/** Whether a typed address can be an e-mail address at all (the server checks it properly). */
export const looksLikeEmail = (email: string): boolean => /^[^\s@]+@[^\s@]+$/.test(email.trim());

/** A person's password (docs/operators/setup.md, docs/api/people.md): 12 to 200 characters. */
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 200;

/** A new password typed twice (setup, an invitation): long enough, and the same both times. */
export function useNewPassword() {
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const tooShort = password.length < PASSWORD_MIN;
  const mismatch = repeat !== password;
  return { password, setPassword, repeat, setRepeat, tooShort, mismatch, fine: !tooShort && !mismatch };
}

export type NewPassword = ReturnType<typeof useNewPassword>;

/** The new password and its repetition; `checked` once submitted, `apiError` for the API's word on it. */
export function NewPasswordFields({
  state,
  checked,
  apiError,
}: {
  state: NewPassword;
  checked: boolean;
  apiError: ApiError | undefined;
}) {
  return (
    <>
      <TextField
        label="Password"
        hint={`At least ${PASSWORD_MIN} characters. A passphrase of a few words is easy to type and hard to guess.`}
        error={
          (checked && state.tooShort ? `Use at least ${PASSWORD_MIN} characters.` : undefined) ??
          apiError?.forField('password')
        }
        type="password"
        autoComplete="new-password"
        minLength={PASSWORD_MIN}
        maxLength={PASSWORD_MAX}
        required
        value={state.password}
        onValue={state.setPassword}
      />
      <TextField
        label="Repeat the password"
        error={checked && state.mismatch ? 'The two passwords differ.' : undefined}
        type="password"
        autoComplete="new-password"
        maxLength={PASSWORD_MAX}
        required
        value={state.repeat}
        onValue={state.setRepeat}
      />
    </>
  );
}
