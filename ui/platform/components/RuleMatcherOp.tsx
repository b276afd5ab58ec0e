import { OP_NAMES, OPS, type MatcherFieldProps, type MatcherOp } from './RuleModel.js';

/** A matcher's test: equal, not equal, matching a pattern or not. */
export function RuleMatcherOp({ id, matcher, position, error, onChange }: MatcherFieldProps) {
  return (
    <div class={error ? 'field field-invalid' : 'field'}>
      <label for={`${id}-op`}>Test</label>
      <select
        id={`${id}-op`}
        value={matcher.op}
        aria-label={`${position}: test`}
        aria-invalid={error ? true : undefined}
        onChange={(event) => onChange({ ...matcher, op: event.currentTarget.value as MatcherOp })}
      >
        {OPS.map((op) => (
          <option key={op} value={op}>
            {op} {OP_NAMES[op]}
          </option>
        ))}
      </select>
      {error ? <p class="field-error">{error}</p> : null}
    </div>
  );
}
