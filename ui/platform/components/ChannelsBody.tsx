import type { JSX } from 'preact';
import { EmptyState } from '../../components/EmptyState.js';
import { Loading } from '../../components/Loading.js';
import { ErrorNotice } from '../../components/Notice.js';
import type { Resource } from '../../hooks.js';
import type { Channel } from './ChannelKinds.js';
import type { TestState } from './ChannelRow.js';
import { ChannelTable } from './ChannelTable.js';

/** The channels: failed, loading, none yet with a way to add one, or the table. */
export function ChannelsBody({
  channels,
  createButton,
  tests,
  toggling,
  onTest,
  onToggle,
  onEdit,
  onDelete,
}: {
  channels: Resource<Channel[]>;
  createButton: JSX.Element;
  tests: ReadonlyMap<string, TestState>;
  toggling: ReadonlySet<string>;
  onTest: (channel: Channel) => void;
  onToggle: (channel: Channel) => void;
  onEdit: (channel: Channel) => void;
  onDelete: (channel: Channel) => void;
}) {
  if (channels.error && !channels.data) {
    return <ErrorNotice error={channels.error} title="The channels could not be loaded." />;
  }
  if (!channels.data) return <Loading what="Loading the channels" />;
  if (channels.data.length === 0) {
    return (
      <EmptyState title="No alerting channels yet">
        <p>
          A channel is where hubgate sends the alerts it raises (deliveries failing, a queue backing up, the
          database out of reach): an e-mail list, a webhook, Slack, Grafana annotations or any HTTP endpoint.
          The routing rules then choose which alerts go to which channel.
        </p>
        {createButton}
      </EmptyState>
    );
  }
  return (
    <ChannelTable
      channels={channels.data}
      tests={tests}
      toggling={toggling}
      onTest={onTest}
      onToggle={onToggle}
      onEdit={onEdit}
      onDelete={onDelete}
    />
  );
}
