import type { RuleDraft } from './RuleModel.js';

/** A rule's name and whether it is on. */
export function RuleCardTop({
  id,
  rule,
  nameError,
  onChange,
}: {
  id: string;
  rule: RuleDraft;
  nameError: string | undefined;
  onChange: (rule: RuleDraft) => void;
}) {
  return (
    <div class="rule-top">
      <div class={nameError ? 'field field-invalid' : 'field'}>
        <label for={`${id}-name`}>Name</label>
        <input
          id={`${id}-name`}
          type="text"
          autoComplete="off"
          maxLength={200}
          value={rule.name}
          aria-invalid={nameError ? true : undefined}
          aria-describedby={nameError ? `${id}-name-error` : undefined}
          onInput={(event) => onChange({ ...rule, name: event.currentTarget.value })}
        />
        {nameError ? (
          <p class="field-error" id={`${id}-name-error`}>
            {nameError}
          </p>
        ) : null}
      </div>
      <label class="check">
        <input
          type="checkbox"
          checked={rule.enabled}
          onChange={(event) => onChange({ ...rule, enabled: event.currentTarget.checked })}
        />
        Enabled
      </label>
    </div>
  );
}
