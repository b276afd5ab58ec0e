import type { Channel } from './ChannelKinds.js';

/** The dialog open over the channels page, if any. */
export type ChannelDialog =
  { kind: 'create' } | { kind: 'edit'; channel: Channel } | { kind: 'delete'; channel: Channel } | null;
