import { useId } from 'preact/hooks';
import type { Channel } from './ChannelKinds.js';
import { RuleCardHead } from './RuleCardHead.js';
import { RuleCardTop } from './RuleCardTop.js';
import { RuleChannelPicker } from './RuleChannelPicker.js';
import { RuleContinue } from './RuleContinue.js';
import { RuleMatchers } from './RuleMatchers.js';
import type { Interval, RuleDraft } from './RuleModel.js';
import { RuleRepeat } from './RuleRepeat.js';

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
      <RuleCardHead id={id} title={title} index={index} count={count} onMove={onMove} onRemove={onRemove} />
      {ruleError ? <p class="field-error">{ruleError}</p> : null}
      <RuleCardTop id={id} rule={rule} nameError={nameError} onChange={onChange} />
      <RuleMatchers rule={rule} title={title} onChange={onChange} errorAt={errorAt} />
      <RuleChannelPicker
        legend="Send to"
        channels={channels}
        selected={rule.channelIds}
        onChange={(channelIds) => onChange({ ...rule, channelIds })}
        error={errorAt('channelIds')}
      />
      <RuleContinue rule={rule} onChange={onChange} />
      <RuleRepeat
        rule={rule}
        defaultRepeat={defaultRepeat}
        onChange={onChange}
        error={errorAt('repeatIntervalSeconds')}
      />
    </li>
  );
}
