import type { Connection } from '../api-types.js';

/** A dialog the connection's page opens over itself. */
export type ConnectionPageDialog = 'edit' | 'pause' | 'resume' | 'recover' | null;

/**
 * What an operator can do with the connection, by its state: send a test (when it delivers), recover
 * failed deliveries (active), pause, edit. A revoked connection offers nothing.
 */
export function ConnectionActions({
  connection,
  editable,
  testing,
  onTest,
  onOpen,
}: {
  connection: Connection;
  /** The catalog knows its connector's fields. */
  editable: boolean;
  testing: boolean;
  onTest: () => void;
  onOpen: (dialog: ConnectionPageDialog) => void;
}) {
  if (connection.status === 'disabled') return null;
  const active = connection.status === 'active';
  return (
    <>
      {connection.deliveryEnabled ? (
        <button
          type="button"
          class="button button-primary"
          onClick={onTest}
          disabled={testing}
          aria-busy={testing}
        >
          {testing ? 'Sending test event…' : 'Send test event'}
        </button>
      ) : null}
      {active ? (
        <button type="button" class="button" onClick={() => onOpen('recover')}>
          Recover failed deliveries
        </button>
      ) : null}
      {/* A paused connection's Resume is in its banner, with the reason it was paused. */}
      {active ? (
        <button type="button" class="button" onClick={() => onOpen('pause')}>
          Pause deliveries
        </button>
      ) : null}
      {editable ? (
        <button type="button" class="button" onClick={() => onOpen('edit')}>
          Edit
        </button>
      ) : null}
    </>
  );
}
