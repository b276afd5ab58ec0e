import { useId } from 'preact/hooks';
import { RuleMatcherName } from './RuleMatcherName.js';
import { RuleMatcherOp } from './RuleMatcherOp.js';
import { RuleMatcherValue } from './RuleMatcherValue.js';
import type { MatcherDraft } from './RuleModel.js';

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
  return (
    <li class="rule-matcher">
      <RuleMatcherName
        id={id}
        matcher={matcher}
        position={position}
        onChange={onChange}
        error={errorAt('name')}
      />
      <RuleMatcherOp
        id={id}
        matcher={matcher}
        position={position}
        onChange={onChange}
        error={errorAt('op')}
      />
      <RuleMatcherValue
        id={id}
        matcher={matcher}
        position={position}
        onChange={onChange}
        error={errorAt('value')}
      />
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
