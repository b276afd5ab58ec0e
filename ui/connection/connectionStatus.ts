// A connection's status (contract §6, §15) as the list and the connection's page say it.
import type { Connection, ConnectionStatus, PausedReason } from '../api-types.js';

export const CONNECTION_STATUS_WORDS: Record<ConnectionStatus, string> = {
  active: 'Active',
  paused: 'Paused',
  disabled: 'Revoked',
};

/** Why it is paused, short enough for a table cell. */
const SHORT_REASONS: Record<PausedReason, string> = {
  manual: 'Paused by hand',
  failing: 'Deliveries kept failing',
  gone: 'Receiver answered 410 Gone',
};

export const pausedShort = (connection: Connection): string | null =>
  connection.status === 'paused' ? SHORT_REASONS[connection.pausedReason ?? 'manual'] : null;
