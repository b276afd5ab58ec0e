import type { Channel } from './ChannelKinds.js';
import { RuleCard } from './RuleCard.js';
import { newRule, type DocumentDraft } from './RuleModel.js';

/** The rules in the order they are checked, each movable and removable, and a way to add one. */
export function RulesList({
  draft,
  channels,
  change,
  errorAt,
}: {
  draft: DocumentDraft;
  channels: Channel[];
  /** `structural`: rules moved, came or went. */
  change: (next: DocumentDraft, structural?: boolean) => void;
  errorAt: (path: string) => string | undefined;
}) {
  return (
    <section class="stack" aria-labelledby="rules-list-title">
      <div class="rules-list-head">
        <h2 id="rules-list-title">Rules, in order</h2>
        <p class="muted">
          Each alert is checked against the enabled rules from the top; the first that matches decides where
          it goes, unless it says to continue.
        </p>
      </div>
      {draft.rules.length === 0 ? (
        <p class="rules-none">No rules: every alert goes to the defaults’ channels.</p>
      ) : (
        <ol class="rule-list">
          {draft.rules.map((rule, r) => (
            <RuleCard
              key={rule.key}
              rule={rule}
              index={r}
              count={draft.rules.length}
              channels={channels}
              defaultRepeat={draft.defaults.repeat}
              onChange={(next) =>
                change({ ...draft, rules: draft.rules.map((x, i) => (i === r ? next : x)) })
              }
              onMove={(by) => {
                const rules = [...draft.rules];
                const [moved] = rules.splice(r, 1);
                if (moved) rules.splice(r + by, 0, moved);
                change({ ...draft, rules }, true);
              }}
              onRemove={() => change({ ...draft, rules: draft.rules.filter((_, i) => i !== r) }, true)}
              errorAt={(path) => errorAt(`rules.${r}.${path}`)}
            />
          ))}
        </ol>
      )}
      <div>
        <button
          type="button"
          class="button"
          onClick={() => change({ ...draft, rules: [...draft.rules, newRule()] }, true)}
        >
          Add rule
        </button>
      </div>
    </section>
  );
}
