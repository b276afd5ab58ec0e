import { useId } from 'preact/hooks';
import { KNOWN_LABELS, type MatcherDraft, type MatcherOp, OP_NAMES, OPS } from './RuleModel.js';

/**
 * One matcher: a label name, an operator and a value, each labelled. The names and values the
 * platform's alerts use are offered as suggestions; any other label can be typed.
 */
export function RuleMatcher({
  matcher,
  position,
  onChange,
  onRemove,
  errorAt,
}: {
  matcher: MatcherDraft;
  /** "Condition 2 of rule “pager”", for the controls' names. */
  position: string;
  onChange: (matcher: MatcherDraft) => void;
  onRemove: () => void;
  errorAt: (field: 'name' | 'op' | 'value') => string | undefined;
}) {
  const id = useId();
  const values = KNOWN_LABELS[matcher.name.trim()] ?? [];
  const nameError = errorAt('name');
  const opError = errorAt('op');
  const valueError = errorAt('value');
  const regex = matcher.op === '=~' || matcher.op === '!~';
  return (
    <li class="rule-matcher">
      <div class={nameError ? 'field field-invalid' : 'field'}>
        <label for={`${id}-name`}>Label</label>
        <input
          id={`${id}-name`}
          type="text"
          list={`${id}-names`}
          autoComplete="off"
          spellcheck={false}
          value={matcher.name}
          aria-label={`${position}: label`}
          aria-invalid={nameError ? true : undefined}
          aria-describedby={nameError ? `${id}-name-error` : undefined}
          onInput={(event) => onChange({ ...matcher, name: event.currentTarget.value })}
        />
        <datalist id={`${id}-names`}>
          {Object.keys(KNOWN_LABELS).map((name) => (
            <option key={name} value={name} />
          ))}
        </datalist>
        {nameError ? (
          <p class="field-error" id={`${id}-name-error`}>
            {nameError}
          </p>
        ) : null}
      </div>
      <div class={opError ? 'field field-invalid' : 'field'}>
        <label for={`${id}-op`}>Test</label>
        <select
          id={`${id}-op`}
          value={matcher.op}
          aria-label={`${position}: test`}
          aria-invalid={opError ? true : undefined}
          onChange={(event) => onChange({ ...matcher, op: event.currentTarget.value as MatcherOp })}
        >
          {OPS.map((op) => (
            <option key={op} value={op}>
              {op} {OP_NAMES[op]}
            </option>
          ))}
        </select>
        {opError ? <p class="field-error">{opError}</p> : null}
      </div>
      <div class={valueError ? 'field field-invalid rule-matcher-value' : 'field rule-matcher-value'}>
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
          aria-invalid={valueError ? true : undefined}
          aria-describedby={`${id}-value-hint${valueError ? ` ${id}-value-error` : ''}`}
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
        {valueError ? (
          <p class="field-error" id={`${id}-value-error`}>
            {valueError}
          </p>
        ) : null}
      </div>
      <button
        type="button"
        class="button button-small button-danger-quiet rule-matcher-remove"
        onClick={onRemove}
      >
        Remove<span class="visually-hidden"> {position}</span>
      </button>
    </li>
  );
}
