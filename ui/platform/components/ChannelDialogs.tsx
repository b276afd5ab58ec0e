import { ChannelDeleteDialog } from './ChannelDeleteDialog.js';
import type { ChannelDialog } from './channelDialog.js';
import { ChannelFormDialog } from './ChannelFormDialog.js';

/** The dialog open over the channels page, if any: add, edit or delete a channel. */
export function ChannelDialogs({
  open,
  onChanged,
  onNews,
  onClose,
}: {
  open: ChannelDialog;
  /** The list is out of date. */
  onChanged: () => void;
  /** What happened, for the page to say. */
  onNews: (news: string) => void;
  onClose: () => void;
}) {
  return (
    <>
      {open?.kind === 'create' ? (
        <ChannelFormDialog
          onClose={onClose}
          onSaved={(channel) => {
            onNews(`“${channel.name}” was added. Send it a test to check that it works.`);
            onChanged();
          }}
        />
      ) : null}
      {open?.kind === 'edit' ? (
        <ChannelFormDialog
          channel={open.channel}
          onClose={onClose}
          onSaved={(channel) => {
            onNews(`“${channel.name}” was saved.`);
            onChanged();
          }}
        />
      ) : null}
      {open?.kind === 'delete' ? (
        <ChannelDeleteDialog
          channel={open.channel}
          onClose={onClose}
          onDeleted={() => {
            onNews(`“${open.channel.name}” was deleted.`);
            onChanged();
          }}
        />
      ) : null}
    </>
  );
}
