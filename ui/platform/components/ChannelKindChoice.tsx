import { KIND_DESCRIPTIONS, KIND_NAMES, KINDS, type Channel, type ChannelKind } from './ChannelKinds.js';

/** A new channel's kind, one radio each; a channel being edited keeps its kind, said in words. */
export function ChannelKindChoice({
  channel,
  kind,
  onKind,
}: {
  channel: Channel | undefined;
  kind: ChannelKind;
  onKind: (kind: ChannelKind) => void;
}) {
  if (channel) {
    return (
      <p class="dialog-intro">
        Kind: <strong>{KIND_NAMES[channel.kind]}</strong>. A channel’s kind cannot change; add another channel
        for another kind.
      </p>
    );
  }
  return (
    <fieldset class="channel-kinds">
      <legend>Kind</legend>
      {KINDS.map((option) => (
        <label key={option} class="channel-kind">
          <input
            type="radio"
            name="kind"
            value={option}
            checked={kind === option}
            onChange={() => onKind(option)}
          />
          <span>
            <span class="channel-kind-name">{KIND_NAMES[option]}</span>
            <span class="channel-kind-description">{KIND_DESCRIPTIONS[option]}</span>
          </span>
        </label>
      ))}
    </fieldset>
  );
}
