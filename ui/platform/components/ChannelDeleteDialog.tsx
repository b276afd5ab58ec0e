import { useState } from 'preact/hooks';
import { ConfirmDialog } from '../../components/Dialog.js';
import { ErrorNotice } from '../../components/Notice.js';
import { useAction } from '../../hooks.js';
import { platformApi } from '../key.js';
import { channelPath, type Channel } from './ChannelKinds.js';
import { RULES_PATH, type RoutingDocument } from './RuleModel.js';

/** Which parts of the routing document name the channel, in words ("the defaults", "rule “pager”"). */
function usersOf(doc: RoutingDocument, id: string): string[] {
  const users = doc.rules.filter((rule) => rule.channelIds.includes(id)).map((rule) => `rule “${rule.name}”`);
  if (doc.defaults.channelIds.includes(id)) users.unshift('the defaults');
  return users;
}

/**
 * Deleting a channel after a confirmation that names it. The API refuses (409) while the routing
 * rules use it without saying which; the dialog reads the rules and names them.
 */
export function ChannelDeleteDialog({
  channel,
  onClose,
  onDeleted,
}: {
  channel: Channel;
  onClose: () => void;
  onDeleted: () => void;
}) {
  const [users, setUsers] = useState<string[] | null>(null);
  const remove = useAction(async () => {
    setUsers(null);
    try {
      await platformApi<void>('DELETE', channelPath(channel.id));
    } catch (error) {
      if (error instanceof Error && 'status' in error && error.status === 409) {
        const doc = await platformApi<RoutingDocument>('GET', RULES_PATH).catch(() => null);
        setUsers(doc ? usersOf(doc, channel.id) : []);
      }
      throw error;
    }
    onDeleted();
    onClose();
  });
  const inUse = remove.error?.status === 409;
  return (
    <ConfirmDialog
      title={`Delete “${channel.name}”?`}
      confirmLabel="Delete channel"
      danger
      busy={remove.busy}
      onConfirm={() => void remove.run()}
      onClose={onClose}
      error={
        inUse ? (
          <div class="notice notice-error" role="alert">
            <strong>“{channel.name}” is still in use</strong>
            {users && users.length > 0 ? <> by {users.join(', ')}</> : null}. Take it out of the routing rules
            first (<a href="/platform/alerting/rules">edit the rules</a>), then delete it.
          </div>
        ) : (
          <ErrorNotice error={remove.error} title="The channel was not deleted." />
        )
      }
    >
      <p>
        Alerts will no longer be sent to <strong>“{channel.name}”</strong>. Its settings and secrets are
        deleted and cannot be recovered.
      </p>
    </ConfirmDialog>
  );
}
