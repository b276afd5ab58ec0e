import { Field } from '../../components/Field.js';
import type { ChannelFieldSpec } from './ChannelKinds.js';

const METHODS = ['POST', 'PUT', 'PATCH'] as const;

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
        {({ id, describedBy, invalid }) => {
          const common = {
            id,
            name: spec.name,
            'aria-describedby': describedBy,
            'aria-invalid': invalid || undefined,
            disabled: remove,
          };
          if (spec.type === 'method') {
            return (
              <select {...common} value={value} onChange={(event) => onValue(event.currentTarget.value)}>
                {METHODS.map((method) => (
                  <option key={method} value={method}>
                    {method}
                  </option>
                ))}
              </select>
            );
          }
          if (spec.type === 'headers') {
            return (
              <textarea
                {...common}
                rows={3}
                spellcheck={false}
                autoComplete="off"
                class="mono"
                placeholder={storedSecret ? 'set — leave empty to keep' : undefined}
                value={value}
                onInput={(event) => onValue(event.currentTarget.value)}
              />
            );
          }
          const type = spec.secret
            ? 'password'
            : spec.type === 'email'
              ? 'email'
              : spec.type === 'url'
                ? 'url'
                : 'text';
          return (
            <input
              {...common}
              type={type as 'text'}
              inputMode={spec.type === 'port' ? 'numeric' : undefined}
              autoComplete={spec.secret ? 'new-password' : 'off'}
              spellcheck={false}
              placeholder={storedSecret ? 'set — leave empty to keep' : undefined}
              value={value}
              onInput={(event) => onValue(event.currentTarget.value)}
            />
          );
        }}
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
