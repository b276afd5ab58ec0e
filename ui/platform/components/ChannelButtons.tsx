import type { Channel } from './ChannelKinds.js';

/** A channel's actions, each named by the channel for a screen reader: test, enable or disable, edit, delete. */
export function ChannelButtons({
  channel,
  testing,
  toggling,
  onTest,
  onToggle,
  onEdit,
  onDelete,
}: {
  channel: Channel;
  testing: boolean | undefined;
  toggling: boolean;
  onTest: (channel: Channel) => void;
  onToggle: (channel: Channel) => void;
  onEdit: (channel: Channel) => void;
  onDelete: (channel: Channel) => void;
}) {
  return (
    <div class="channel-buttons">
      <button
        type="button"
        class="button button-small"
        disabled={testing}
        aria-busy={testing}
        onClick={() => onTest(channel)}
      >
        Send test<span class="visually-hidden"> to {channel.name}</span>
      </button>
      <button
        type="button"
        class="button button-small"
        aria-busy={toggling}
        onClick={() => onToggle(channel)}
      >
        {channel.enabled ? 'Disable' : 'Enable'}
        <span class="visually-hidden"> {channel.name}</span>
      </button>
      <button type="button" class="button button-small" onClick={() => onEdit(channel)}>
        Edit<span class="visually-hidden"> {channel.name}</span>
      </button>
      <button type="button" class="button button-small button-danger-quiet" onClick={() => onDelete(channel)}>
        Delete<span class="visually-hidden"> {channel.name}</span>
      </button>
    </div>
  );
}
