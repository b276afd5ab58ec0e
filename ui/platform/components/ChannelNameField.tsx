import { Field } from '../../components/Field.js';
import { CHANNEL_NAME_MAX } from './channelFormValues.js';

/** A channel's name, as alerts and the rules say it. */
export function ChannelNameField({
  value,
  onInput,
  error,
}: {
  value: string;
  onInput: (value: string) => void;
  error: string | undefined;
}) {
  return (
    <Field
      label="Name"
      hint="How alerts and the rules name this channel, e.g. “on-call e-mail”."
      error={error}
    >
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          type="text"
          autoComplete="off"
          maxLength={CHANNEL_NAME_MAX}
          required
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}
