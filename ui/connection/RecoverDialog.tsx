import type { Connection, RecoverAnswer } from '../api-types.js';
import { Dialog } from '../components/Dialog.js';
import { ErrorNotice } from '../components/Notice.js';
import { connectionApi } from './paths.js';
import { RecoverFields } from './RecoverFields.js';
import { countText } from './useDeliveryCount.js';
import { useRecover, type Recover } from './useRecover.js';

/** How many deliveries the range matches, said before anything is sent (announced as it changes). */
function RecoverCount({ state }: { state: Recover }) {
  const { count, problem, statuses } = state;
  let text;
  if (statuses.length === 0) text = <>Choose which deliveries to send again.</>;
  else if (problem) text = <>Choose a valid range to see how many deliveries it holds.</>;
  else if (count.error) text = <>The deliveries could not be counted: {count.error.message}</>;
  else if (!count.data) text = <>Counting the deliveries…</>;
  else if (count.data.count === 0)
    text = <>No delivery in this range matches: there is nothing to recover.</>;
  else {
    text = (
      <>
        <strong>{countText(count.data)}</strong> will be sent again, oldest first.
        {count.data.more ? ' One request queues at most 10,000; recover again for more.' : ''}
      </>
    );
  }
  return (
    <p class="recover-count" role="status" aria-busy={!count.data && !count.error && !problem}>
      {text}
    </p>
  );
}

/** "Recover failed deliveries": a time range, the count it holds, then one request that queues them. */
export function RecoverDialog({
  connection,
  onRecovered,
  onClose,
}: {
  connection: Connection;
  onRecovered: (answer: RecoverAnswer) => void;
  onClose: () => void;
}) {
  const state = useRecover(connectionApi(connection.id), onRecovered);
  const { count, recover } = state;
  const ready = Boolean(count.data && count.data.count > 0 && !state.problem && state.statuses.length > 0);
  return (
    <Dialog title={`Recover failed deliveries of “${connection.displayName}”`} onClose={onClose} wide>
      <form
        class="form"
        onSubmit={(event) => {
          event.preventDefault();
          if (ready) void recover.run();
        }}
      >
        <p class="dialog-lead">
          Once the receiver is fixed, send again what failed: each delivery keeps its ID and its earlier
          attempts, and goes to the connection’s current URL.
        </p>
        <RecoverFields state={state} />
        <RecoverCount state={state} />
        <ErrorNotice error={recover.error} title="Nothing was recovered." />
        <div class="dialog-actions">
          <button type="button" class="button" onClick={onClose} disabled={recover.busy}>
            Cancel
          </button>
          <button
            type="submit"
            class="button button-primary"
            disabled={!ready || recover.busy}
            aria-busy={recover.busy}
          >
            {recover.busy
              ? 'Recovering…'
              : ready && count.data
                ? `Recover ${countText(count.data)}`
                : 'Recover deliveries'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
