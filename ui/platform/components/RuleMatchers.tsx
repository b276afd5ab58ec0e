import { RuleMatcher } from './RuleMatcher.js';
import { newMatcher, type RuleDraft } from './RuleModel.js';

/** The conditions an alert must meet (all of them) for a rule, and a way to add one. */
export function RuleMatchers({
  rule,
  title,
  onChange,
  errorAt,
}: {
  rule: RuleDraft;
  /** The rule's heading, to name each condition. */
  title: string;
  onChange: (rule: RuleDraft) => void;
  errorAt: (path: string) => string | undefined;
}) {
  return (
    <fieldset class="rule-matchers">
      <legend>When an alert has</legend>
      {rule.matchers.length === 0 ? (
        <p class="muted">No conditions: this rule matches every alert.</p>
      ) : (
        <ol class="plain-list">
          {rule.matchers.map((matcher, m) => (
            <RuleMatcher
              key={matcher.key}
              matcher={matcher}
              position={`condition ${m + 1} of ${title}`}
              onChange={(next) =>
                onChange({ ...rule, matchers: rule.matchers.map((x, i) => (i === m ? next : x)) })
              }
              onRemove={() => onChange({ ...rule, matchers: rule.matchers.filter((_, i) => i !== m) })}
              errorAt={(field) => errorAt(`matchers.${m}.${field}`)}
            />
          ))}
        </ol>
      )}
      <button
        type="button"
        class="button button-small"
        onClick={() => onChange({ ...rule, matchers: [...rule.matchers, newMatcher()] })}
      >
        Add condition<span class="visually-hidden"> to {title}</span>
      </button>
      {rule.matchers.length > 1 ? <p class="field-hint">Every condition must hold.</p> : null}
    </fieldset>
  );
}
