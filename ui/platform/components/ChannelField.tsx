import { Field } from '../../components/Field.js';
import { ChannelFieldControl } from './ChannelFieldControl.js';
import type { ChannelFieldSpec } from './ChannelKinds.js';

/**
 * One field of a channel's config, labelled with its hint. A secret field is a password input
 * that is write-only: when editing a channel that has it set, it says so and empty keeps it.
 */
export function ChannelField({
  spec,
  value,
  onValue,
  error,
  storedSecret,
  remove,
  onRemove,
}: {
  spec: ChannelFieldSpec;
  value: string;
  onValue: (value: string) => void;
  error?: string;
  /** Editing, and the channel holds this secret: "set — leave empty to keep". */
  storedSecret?: boolean;
  remove?: boolean;
  onRemove?: (remove: boolean) => void;
}) {
  const label = spec.required ? spec.label : `${spec.label} (optional)`;
  const hint = storedSecret ? `Set — leave empty to keep it. ${spec.hint}` : spec.hint;
  return (
    <div class="channel-field">
      <Field label={label} hint={hint} error={error}>
        {(ids) => (
          <ChannelFieldControl
            spec={spec}
            value={value}
            onValue={onValue}
            storedSecret={storedSecret}
            remove={remove}
            ids={ids}
          />
        )}
      </Field>
      {storedSecret && !spec.required && onRemove ? (
        <label class="check">
          <input
            type="checkbox"
            checked={remove}
            onChange={(event) => onRemove(event.currentTarget.checked)}
          />
          Remove the stored {spec.label.toLowerCase()}
        </label>
      ) : null}
    </div>
  );
}
