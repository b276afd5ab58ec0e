import { KNOWN_LABELS, type MatcherFieldProps } from './RuleModel.js';

/** A matcher's label name, with the names the platform's alerts use as suggestions. */
export function RuleMatcherName({ id, matcher, position, error, onChange }: MatcherFieldProps) {
  return (
    <div class={error ? 'field field-invalid' : 'field'}>
      <label for={`${id}-name`}>Label</label>
      <input
        id={`${id}-name`}
        type="text"
        list={`${id}-names`}
        autoComplete="off"
        spellcheck={false}
        value={matcher.name}
        aria-label={`${position}: label`}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-name-error` : undefined}
        onInput={(event) => onChange({ ...matcher, name: event.currentTarget.value })}
      />
      <datalist id={`${id}-names`}>
        {Object.keys(KNOWN_LABELS).map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      {error ? (
        <p class="field-error" id={`${id}-name-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}
