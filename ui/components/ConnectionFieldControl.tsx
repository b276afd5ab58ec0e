import { isNumeric } from '../connection/configValues.js';
import type { CatalogField } from './ConnectionField.js';
import { ConnectionFieldSelect } from './ConnectionFieldSelect.js';

/** The control of a catalog field, wired to its label, hint and error by `ids`. */
export function ConnectionFieldControl({
  field,
  value,
  onInput,
  secret,
  ids: { id, describedBy, invalid },
}: {
  field: CatalogField;
  value: string;
  onInput: (value: string) => void;
  secret?: boolean;
  ids: { id: string; describedBy: string | undefined; invalid: boolean };
}) {
  const common = {
    id,
    name: field.name,
    'aria-describedby': describedBy,
    'aria-invalid': invalid || undefined,
  };
  if (field.options) {
    return <ConnectionFieldSelect common={common} options={field.options} value={value} onInput={onInput} />;
  }
  if (secret) {
    return (
      <input
        {...common}
        type="password"
        required={field.required}
        value={value}
        autoComplete="new-password"
        spellcheck={false}
        onInput={(event) => onInput(event.currentTarget.value)}
      />
    );
  }
  const text = {
    ...common,
    class: field.name === 'eventTypes' || field.name === 'signingSecret' ? 'mono' : undefined,
    required: field.required,
    value,
    autoComplete: 'off',
    spellcheck: false,
    onInput: (event: { currentTarget: HTMLInputElement }) => onInput(event.currentTarget.value),
  };
  if (field.format === 'uri') return <input {...text} type="url" inputMode="url" placeholder="https://" />;
  if (isNumeric(field)) return <input {...text} type="text" inputMode="numeric" class="num-input" />;
  return (
    <input
      {...text}
      type="text"
      placeholder={field.name === 'eventTypes' ? 'employee.*, invoice.paid' : undefined}
    />
  );
}
