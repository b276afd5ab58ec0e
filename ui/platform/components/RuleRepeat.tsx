import { RuleInterval } from './RuleInterval.js';
import type { Interval, RuleDraft } from './RuleModel.js';

/** How often a rule sends a still-firing alert again: as the defaults say, or its own interval. */
export function RuleRepeat({
  rule,
  defaultRepeat,
  onChange,
  error,
}: {
  rule: RuleDraft;
  defaultRepeat: Interval;
  onChange: (rule: RuleDraft) => void;
  error: string | undefined;
}) {
  return (
    <>
      <label class="check">
        <input
          type="checkbox"
          checked={rule.repeat === null}
          onChange={(event) =>
            onChange({ ...rule, repeat: event.currentTarget.checked ? null : { ...defaultRepeat } })
          }
        />
        Repeat as the defaults say ({defaultRepeat.amount} {defaultRepeat.unit})
      </label>
      {rule.repeat ? (
        <RuleInterval
          legend="Repeat interval"
          value={rule.repeat}
          onChange={(repeat) => onChange({ ...rule, repeat })}
          error={error}
          hint="How long before an alert that is still firing is sent again to the same channel."
        />
      ) : null}
    </>
  );
}
