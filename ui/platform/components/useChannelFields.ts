import { useState } from 'preact/hooks';
import { initialTexts, type Texts } from './channelFormValues.js';
import type { Channel, ChannelKind } from './ChannelKinds.js';

/** What the channel form holds: the kind, the name, the kind's texts, and stored fields to remove. */
export function useChannelFields(channel: Channel | undefined) {
  const [kind, setKind] = useState<ChannelKind>(channel?.kind ?? 'WEBHOOK');
  const [name, setName] = useState(channel?.name ?? '');
  const [texts, setTexts] = useState<Texts>(() => initialTexts(channel?.kind ?? 'WEBHOOK', channel));
  const [removed, setRemoved] = useState<Set<string>>(() => new Set());
  /** Another kind: its own fields, empty. */
  const resetKind = (option: ChannelKind) => {
    setKind(option);
    setTexts(initialTexts(option, undefined));
  };
  const setText = (field: string, value: string) => setTexts((previous) => ({ ...previous, [field]: value }));
  const setRemove = (field: string, remove: boolean) =>
    setRemoved((previous) => {
      const next = new Set(previous);
      if (remove) next.add(field);
      else next.delete(field);
      return next;
    });
  return { kind, resetKind, name, setName, texts, setText, removed, setRemove };
}
