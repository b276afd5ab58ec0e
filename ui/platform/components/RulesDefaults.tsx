import type { Channel } from './ChannelKinds.js';
import { RuleChannelPicker } from './RuleChannelPicker.js';
import { RuleInterval } from './RuleInterval.js';
import type { DocumentDraft } from './RuleModel.js';

/** The defaults: where an alert no rule matches goes, and the repeat interval rules inherit. */
export function RulesDefaults({
  draft,
  channels,
  change,
  errorAt,
}: {
  draft: DocumentDraft;
  channels: Channel[];
  change: (next: DocumentDraft) => void;
  errorAt: (path: string) => string | undefined;
}) {
  return (
    <section class="card stack" aria-labelledby="rules-defaults-title">
      <h2 id="rules-defaults-title">Defaults</h2>
      <p class="muted">
        Where an alert goes when no rule matches it, and how often a firing alert is repeated.
      </p>
      <RuleChannelPicker
        legend="Send unmatched alerts to"
        channels={channels}
        selected={draft.defaults.channelIds}
        onChange={(channelIds) => change({ ...draft, defaults: { ...draft.defaults, channelIds } })}
        error={errorAt('defaults.channelIds')}
        hint="None: alerts that no rule matches are not sent anywhere."
      />
      <RuleInterval
        legend="Default repeat interval"
        value={draft.defaults.repeat}
        onChange={(repeat) => change({ ...draft, defaults: { ...draft.defaults, repeat } })}
        error={errorAt('defaults.repeatIntervalSeconds')}
        hint="How long before an alert still firing is sent again to the same channel (at most 7 days)."
      />
    </section>
  );
}
