import { useId } from 'preact/hooks';
import { ConnectionField, fieldLabel, type CatalogField } from './ConnectionField.js';

/** A generated field: "generate one for me" (the default, sending nothing) or "use my own". */
export function CredentialsGeneratedChoice({
  field,
  own,
  onOwn,
  value,
  onInput,
  error,
}: {
  field: CatalogField;
  own: boolean;
  onOwn: (own: boolean) => void;
  value: string;
  onInput: (value: string) => void;
  error?: string;
}) {
  const name = useId();
  const label = fieldLabel(field.name);
  return (
    <fieldset class="credentials-choice">
      <legend>{label}</legend>
      <label class="check">
        <input type="radio" name={name} checked={!own} onChange={() => onOwn(false)} />
        <span>Generate a {label.toLowerCase()} for me</span>
      </label>
      <label class="check">
        <input type="radio" name={name} checked={own} onChange={() => onOwn(true)} />
        <span>Use my own</span>
      </label>
      {own ? (
        <ConnectionField field={{ ...field, required: true }} value={value} onInput={onInput} error={error} />
      ) : null}
    </fieldset>
  );
}
