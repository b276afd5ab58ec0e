import type { Channel } from './ChannelKinds.js';
import { ChannelRow, type TestState } from './ChannelRow.js';

/** The alerting channels, with what each sends to and the actions on it. */
export function ChannelTable({
  channels,
  tests,
  toggling,
  onTest,
  onToggle,
  onEdit,
  onDelete,
}: {
  channels: Channel[];
  tests: ReadonlyMap<string, TestState>;
  toggling: ReadonlySet<string>;
  onTest: (channel: Channel) => void;
  onToggle: (channel: Channel) => void;
  onEdit: (channel: Channel) => void;
  onDelete: (channel: Channel) => void;
}) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label="Alerting channels">
      <table class="channel-table">
        <caption class="visually-hidden">Alerting channels, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Channel</th>
            <th scope="col">Settings</th>
            <th scope="col">Status</th>
            <th scope="col">Last delivery</th>
            <th scope="col" class="actions">
              Actions
            </th>
          </tr>
        </thead>
        <tbody>
          {channels.map((channel) => (
            <ChannelRow
              key={channel.id}
              channel={channel}
              test={tests.get(channel.id)}
              toggling={toggling}
              onTest={onTest}
              onToggle={onToggle}
              onEdit={onEdit}
              onDelete={onDelete}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}
