import { KNOWN_LABELS, type MatcherFieldProps } from './RuleModel.js';

/** A matcher's value (or pattern, for a regex test), with the known values of its label as suggestions. */
export function RuleMatcherValue({ id, matcher, position, error, onChange }: MatcherFieldProps) {
  const values = KNOWN_LABELS[matcher.name.trim()] ?? [];
  const regex = matcher.op === '=~' || matcher.op === '!~';
  return (
    <div class={error ? 'field field-invalid rule-matcher-value' : 'field rule-matcher-value'}>
      <label for={`${id}-value`}>{regex ? 'Pattern' : 'Value'}</label>
      <input
        id={`${id}-value`}
        type="text"
        list={values.length > 0 ? `${id}-values` : undefined}
        autoComplete="off"
        spellcheck={false}
        class={regex ? 'mono' : undefined}
        value={matcher.value}
        aria-label={`${position}: ${regex ? 'pattern' : 'value'}`}
        aria-invalid={error ? true : undefined}
        aria-describedby={`${id}-value-hint${error ? ` ${id}-value-error` : ''}`}
        onInput={(event) => onChange({ ...matcher, value: event.currentTarget.value })}
      />
      {values.length > 0 ? (
        <datalist id={`${id}-values`}>
          {values.map((value) => (
            <option key={value} value={value} />
          ))}
        </datalist>
      ) : null}
      <p class="field-hint" id={`${id}-value-hint`}>
        {regex
          ? 'An RE2 regular expression matched against the whole value, e.g. Delivery.*'
          : 'An alert without this label has the value "" (empty).'}
      </p>
      {error ? (
        <p class="field-error" id={`${id}-value-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}
