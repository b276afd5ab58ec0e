import type { RuleDraft } from './RuleModel.js';

/** Whether the walk through the rules goes on after this one matched. */
export function RuleContinue({ rule, onChange }: { rule: RuleDraft; onChange: (rule: RuleDraft) => void }) {
  return (
    <label class="check">
      <input
        type="checkbox"
        checked={rule.continue}
        onChange={(event) => onChange({ ...rule, continue: event.currentTarget.checked })}
      />
      <span>
        Continue with the next rules after this one matched
        <span class="field-hint rule-check-hint">
          Off: the first matching rule decides. On: the alert also goes where later matching rules say.
        </span>
      </span>
    </label>
  );
}
