import { useEffect, useRef, useState } from 'preact/hooks';
import { useAction } from '../../hooks.js';
import { platformApi } from '../key.js';
import { channelConfig } from './channelFormValues.js';
import {
  channelPath,
  CHANNELS_PATH,
  fieldProblem,
  KIND_FIELDS,
  type Channel,
  type ChannelKind,
  type CreatedChannel,
} from './ChannelKinds.js';
import { useChannelFields } from './useChannelFields.js';

/**
 * The channel form: the kind (on create), the name and the kind's fields, checked on submit; a new
 * channel with a generated secret stays `created` to show it.
 */
export function useChannelForm(
  channel: Channel | undefined,
  onSaved: (channel: Channel) => void,
  onClose: () => void,
) {
  const editing = channel !== undefined;
  const fields = useChannelFields(channel);
  const { kind, name, texts, removed } = fields;
  const [checked, setChecked] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const [created, setCreated] = useState<CreatedChannel | null>(null);
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (attempt === 0) return;
    form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [attempt]);

  const specs = KIND_FIELDS[kind];
  const submit = useAction(async () => {
    const config = channelConfig(specs, texts, removed, channel);
    if (editing) {
      const saved = await platformApi<Channel>('PATCH', channelPath(channel.id), {
        body: { name: name.trim(), config },
      });
      onSaved(saved);
      onClose();
      return;
    }
    const answer = await platformApi<CreatedChannel>('POST', CHANNELS_PATH, {
      body: { name: name.trim(), kind, config },
    });
    onSaved(answer);
    if (answer.signingSecret) setCreated(answer);
    else onClose();
  });
  const onSubmit = (event: Event) => {
    event.preventDefault();
    setChecked(true);
    setAttempt((n) => n + 1);
    const invalid =
      !name.trim() ||
      specs.some((spec) => !removed.has(spec.name) && fieldProblem(spec, texts[spec.name] ?? '', editing));
    if (!invalid) void submit.run();
  };
  const chooseKind = (option: ChannelKind) => {
    fields.resetKind(option);
    submit.setError(undefined);
  };
  return { ...fields, editing, chooseKind, checked, created, form, specs, submit, onSubmit };
}

export type ChannelForm = ReturnType<typeof useChannelForm>;
