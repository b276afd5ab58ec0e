import { useEffect, useRef } from 'preact/hooks';
import { ruleSummary, type DocumentDraft, type RuleDraft } from './RuleModel.js';

interface Line {
  title: string;
  text: string;
}

function linesOf(draft: DocumentDraft, channelName: (id: string) => string): Line[] {
  const defaults =
    draft.defaults.channelIds.length === 0
      ? 'no channel'
      : draft.defaults.channelIds.map(channelName).join(', ');
  return [
    {
      title: 'Defaults',
      text: `unmatched alerts → ${defaults}; repeat every ${draft.defaults.repeat.amount} ${draft.defaults.repeat.unit}`,
    },
    ...draft.rules.map((rule: RuleDraft, i) => ({
      title: `${i + 1}. ${rule.name.trim() || '(no name)'}`,
      text: ruleSummary(rule, channelName),
    })),
  ];
}

function Version({ heading, lines, other }: { heading: string; lines: Line[]; other: Set<string> }) {
  return (
    <section class="rule-version" aria-label={heading}>
      <h3>{heading}</h3>
      <ul class="plain-list">
        {lines.map((line, i) => {
          const differs = !other.has(`${line.title}\u0000${line.text}`);
          return (
            <li key={i} class={differs ? 'rule-version-differs' : undefined}>
              <strong>{line.title}</strong>
              {differs ? <span class="badge badge-warn">differs</span> : null}
              <span class="rule-version-text">{line.text}</span>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

/**
 * Someone saved the rules since this page read them (409 on If-Match). Both versions side by side,
 * what differs marked in words; the operator chooses. Nothing is dropped until they do.
 */
export function RuleConflict({
  theirs,
  theirRevision,
  mine,
  channelName,
  busy,
  onKeepMine,
  onTakeTheirs,
}: {
  theirs: DocumentDraft;
  theirRevision: number;
  mine: DocumentDraft;
  channelName: (id: string) => string;
  busy: boolean;
  onKeepMine: () => void;
  onTakeTheirs: () => void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const theirLines = linesOf(theirs, channelName);
  const myLines = linesOf(mine, channelName);
  const keyOf = (line: Line) => `${line.title}\u0000${line.text}`;
  return (
    <section class="card rule-conflict" role="alert" aria-labelledby="rule-conflict-title">
      <h2 id="rule-conflict-title" tabIndex={-1} ref={heading}>
        Someone else saved the rules meanwhile
      </h2>
      <p>
        The rules were changed (now revision {theirRevision}) after this page loaded them, so your changes
        were not saved. Nothing is lost: compare the two versions, then choose which one to keep.
      </p>
      <div class="rule-versions">
        <Version
          heading={`Theirs (saved, revision ${theirRevision})`}
          lines={theirLines}
          other={new Set(myLines.map(keyOf))}
        />
        <Version heading="Yours (not saved)" lines={myLines} other={new Set(theirLines.map(keyOf))} />
      </div>
      <div class="row">
        <button
          type="button"
          class="button button-primary"
          disabled={busy}
          aria-busy={busy}
          onClick={onKeepMine}
        >
          {busy ? 'Saving…' : 'Keep mine and save over theirs'}
        </button>
        <button type="button" class="button" disabled={busy} onClick={onTakeTheirs}>
          Take theirs (discard mine)
        </button>
      </div>
    </section>
  );
}
