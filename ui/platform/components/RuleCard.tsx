import { useId } from 'preact/hooks';
import type { Channel } from './ChannelKinds.js';
import { RuleChannelPicker } from './RuleChannelPicker.js';
import { RuleInterval } from './RuleInterval.js';
import { RuleMatcher } from './RuleMatcher.js';
import { type Interval, newMatcher, type RuleDraft } from './RuleModel.js';

/**
 * One routing rule in the editor: its name, on/off, the conditions an alert must meet (all of
 * them), the channels it goes to, whether the walk continues, and its repeat interval.
 */
export function RuleCard({
  rule,
  index,
  count,
  channels,
  defaultRepeat,
  onChange,
  onMove,
  onRemove,
  errorAt,
}: {
  rule: RuleDraft;
  index: number;
  count: number;
  channels: Channel[];
  defaultRepeat: Interval;
  onChange: (rule: RuleDraft) => void;
  onMove: (by: -1 | 1) => void;
  onRemove: () => void;
  /** The error for a path under this rule (`name`, `matchers.0.value` …). */
  errorAt: (path: string) => string | undefined;
}) {
  const id = useId();
  const title = rule.name.trim() ? `Rule ${index + 1}: ${rule.name.trim()}` : `Rule ${index + 1}`;
  const nameError = errorAt('name');
  const ruleError = errorAt('id') ?? errorAt('matchers');
  return (
    <li
      class={rule.enabled ? 'card rule-card' : 'card rule-card rule-card-off'}
      aria-labelledby={`${id}-title`}
    >
      <div class="rule-head">
        <h3 id={`${id}-title`}>{title}</h3>
        <div class="row">
          <button type="button" class="button button-small" disabled={index === 0} onClick={() => onMove(-1)}>
            Move up<span class="visually-hidden"> {title}</span>
          </button>
          <button
            type="button"
            class="button button-small"
            disabled={index === count - 1}
            onClick={() => onMove(1)}
          >
            Move down<span class="visually-hidden"> {title}</span>
          </button>
          <button type="button" class="button button-small button-danger-quiet" onClick={onRemove}>
            Remove<span class="visually-hidden"> {title}</span>
          </button>
        </div>
      </div>
      {ruleError ? <p class="field-error">{ruleError}</p> : null}
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
      <RuleChannelPicker
        legend="Send to"
        channels={channels}
        selected={rule.channelIds}
        onChange={(channelIds) => onChange({ ...rule, channelIds })}
        error={errorAt('channelIds')}
      />
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
          error={errorAt('repeatIntervalSeconds')}
          hint="How long before an alert that is still firing is sent again to the same channel."
        />
      ) : null}
    </li>
  );
}
