import { FormActions } from '../../components/Dialog.js';
import { ErrorNotice } from '../../components/Notice.js';
import { ChannelField } from './ChannelField.js';
import { channelFormErrors } from './channelFormValues.js';
import { ChannelKindChoice } from './ChannelKindChoice.js';
import { DESTINATION_FORBIDDEN_HINT, type Channel } from './ChannelKinds.js';
import { ChannelNameField } from './ChannelNameField.js';
import type { ChannelForm as ChannelFormState } from './useChannelForm.js';

/** The channel form: kind, name, the kind's fields, and what was refused. */
export function ChannelForm({
  channel,
  state,
  onClose,
}: {
  channel: Channel | undefined;
  state: ChannelFormState;
  onClose: () => void;
}) {
  const { editing, kind, specs, texts, removed, submit } = state;
  const { forbidden, nameError, errors, otherError } = channelFormErrors(specs, state, submit.error);
  const stored = new Set(channel?.secretFields ?? []);
  return (
    <form class="form" ref={state.form} noValidate onSubmit={state.onSubmit}>
      <ChannelKindChoice channel={channel} kind={kind} onKind={state.chooseKind} />
      <ChannelNameField value={state.name} onInput={state.setName} error={nameError} />
      {specs.map((spec) => (
        <ChannelField
          key={`${kind}-${spec.name}`}
          spec={spec}
          value={texts[spec.name] ?? ''}
          onValue={(value) => state.setText(spec.name, value)}
          error={errors[spec.name]}
          storedSecret={editing && spec.secret && stored.has(spec.name)}
          remove={removed.has(spec.name)}
          onRemove={(remove) => state.setRemove(spec.name, remove)}
        />
      ))}
      {kind === 'WEBHOOK' && !editing ? (
        <p class="field-hint">
          hubgate generates the signing secret and shows it once, after the channel is added.
        </p>
      ) : null}
      {otherError ? (
        <div>
          <ErrorNotice error={otherError} />
          {forbidden ? <p class="field-hint">{DESTINATION_FORBIDDEN_HINT}</p> : null}
        </div>
      ) : null}
      <FormActions
        busy={submit.busy}
        onCancel={onClose}
        label={editing ? 'Save changes' : 'Add channel'}
        busyLabel="Saving…"
      />
    </form>
  );
}
