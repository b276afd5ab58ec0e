import { Dialog } from '../../components/Dialog.js';
import { useSecretGuard } from '../../components/KeySecretStep.js';
import { ChannelForm } from './ChannelForm.js';
import type { Channel } from './ChannelKinds.js';
import { ChannelSecretShown } from './ChannelSecretShown.js';
import { useChannelForm } from './useChannelForm.js';

const ignore = () => undefined;

/**
 * Creating a channel (a kind, then only that kind's fields) or changing one (its kind fixed; secret
 * fields write-only: empty keeps the stored value, and the PATCH leaves them out). A new WEBHOOK
 * channel's generated signing secret is shown once, here.
 */
export function ChannelFormDialog({
  channel,
  onClose,
  onSaved,
}: {
  channel?: Channel;
  onClose: () => void;
  onSaved: (channel: Channel) => void;
}) {
  const state = useChannelForm(channel, onSaved, onClose);
  const guard = useSecretGuard(onClose);
  const { created, submit } = state;

  if (created?.signingSecret) {
    return (
      <Dialog
        title="Save the signing secret"
        wide
        onClose={onClose}
        onCancel={guard.confirming ? guard.goBack : guard.requestClose}
      >
        <ChannelSecretShown
          name={created.name}
          secret={created.signingSecret}
          guard={guard}
          onClose={onClose}
        />
      </Dialog>
    );
  }
  return (
    <Dialog
      title={channel ? `Edit “${channel.name}”` : 'Add an alerting channel'}
      wide
      onClose={onClose}
      onCancel={submit.busy ? ignore : onClose}
    >
      <ChannelForm channel={channel} state={state} onClose={onClose} />
    </Dialog>
  );
}
