import { useId } from 'preact/hooks';
import { KIND_NAMES, type Channel } from './ChannelKinds.js';
import { RuleFieldNotes } from './RuleFieldNotes.js';

/** The channels to offer: the list's, then any selected ID the list does not hold. */
function channelOptions(channels: Channel[], selected: string[]) {
  const known = new Set(channels.map((c) => c.id));
  return [
    ...channels.map((c) => ({
      id: c.id,
      label: c.name,
      detail: `${KIND_NAMES[c.kind]}${c.enabled ? '' : ', disabled'}`,
    })),
    ...selected.filter((s) => !known.has(s)).map((s) => ({ id: s, label: s, detail: 'no such channel' })),
  ];
}

/**
 * Channels as checkboxes, from the channel list. An ID the list does not hold (a channel deleted
 * meanwhile) stays shown, so that unticking it is possible.
 */
export function RuleChannelPicker({
  legend,
  channels,
  selected,
  onChange,
  error,
  hint,
}: {
  legend: string;
  channels: Channel[];
  selected: string[];
  onChange: (ids: string[]) => void;
  error?: string;
  hint?: string;
}) {
  const id = useId();
  const options = channelOptions(channels, selected);
  const describedBy =
    [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <fieldset class={error ? 'rule-channels field-invalid' : 'rule-channels'} aria-describedby={describedBy}>
      <legend>{legend}</legend>
      {options.length === 0 ? (
        <p class="muted">
          No channels yet. <a href="/platform/alerting/channels">Add a channel</a> first.
        </p>
      ) : (
        <div class="rule-channel-options">
          {options.map((option) => (
            <label key={option.id} class="check">
              <input
                type="checkbox"
                checked={selected.includes(option.id)}
                aria-invalid={error ? true : undefined}
                onChange={(event) =>
                  onChange(
                    event.currentTarget.checked
                      ? [...selected, option.id]
                      : selected.filter((s) => s !== option.id),
                  )
                }
              />
              <span>
                <bdi>{option.label}</bdi> <span class="muted">({option.detail})</span>
              </span>
            </label>
          ))}
        </div>
      )}
      <RuleFieldNotes id={id} hint={hint} error={error} />
    </fieldset>
  );
}
