import { useId } from 'preact/hooks';
import type { Channel } from './ChannelKinds.js';
import { KIND_NAMES } from './ChannelKinds.js';

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
  const known = new Set(channels.map((c) => c.id));
  const options = [
    ...channels.map((c) => ({
      id: c.id,
      label: c.name,
      detail: `${KIND_NAMES[c.kind]}${c.enabled ? '' : ', disabled'}`,
    })),
    ...selected.filter((s) => !known.has(s)).map((s) => ({ id: s, label: s, detail: 'no such channel' })),
  ];
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
      {hint ? (
        <p class="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
