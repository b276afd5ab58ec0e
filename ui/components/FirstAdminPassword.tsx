import { TextField } from './TextField.js';
import { MIN_PASSWORD, type FirstAdmin } from './useFirstAdmin.js';

/** The first administrator's password, typed twice. */
export function FirstAdminPassword({ form }: { form: FirstAdmin }) {
  const { checked, tooShort, mismatch } = form;
  return (
    <>
      <TextField
        label="Password"
        hint={`At least ${MIN_PASSWORD} characters. A passphrase of a few words is easy to type and hard to guess.`}
        error={
          (checked && tooShort ? `Use at least ${MIN_PASSWORD} characters.` : undefined) ??
          form.submit.error?.forField('password')
        }
        type="password"
        autoComplete="new-password"
        minLength={MIN_PASSWORD}
        maxLength={200}
        required
        value={form.password}
        onValue={form.setPassword}
      />
      <TextField
        label="Repeat the password"
        error={checked && mismatch ? 'The two passwords differ.' : undefined}
        type="password"
        autoComplete="new-password"
        maxLength={200}
        required
        value={form.repeat}
        onValue={form.setRepeat}
      />
    </>
  );
}
