import type { ChannelFieldSpec } from './ChannelKinds.js';
import { ChannelMethodSelect, type ChannelControlWiring } from './ChannelMethodSelect.js';

/** The input of a channel field, wired to its label, hint and error by `ids`; off while removed. */
export function ChannelFieldControl({
  spec,
  value,
  onValue,
  storedSecret,
  remove,
  ids: { id, describedBy, invalid },
}: {
  spec: ChannelFieldSpec;
  value: string;
  onValue: (value: string) => void;
  storedSecret?: boolean;
  remove?: boolean;
  ids: { id: string; describedBy: string | undefined; invalid: boolean };
}) {
  const common: ChannelControlWiring = {
    id,
    name: spec.name,
    'aria-describedby': describedBy,
    'aria-invalid': invalid || undefined,
    disabled: remove,
  };
  const placeholder = storedSecret ? 'set — leave empty to keep' : undefined;
  if (spec.type === 'method') return <ChannelMethodSelect common={common} value={value} onValue={onValue} />;
  if (spec.type === 'headers') {
    return (
      <textarea
        {...common}
        rows={3}
        spellcheck={false}
        autoComplete="off"
        class="mono"
        placeholder={placeholder}
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
      placeholder={placeholder}
      value={value}
      onInput={(event) => onValue(event.currentTarget.value)}
    />
  );
}
