import { useEffect, useState } from 'preact/hooks';
import type { Connection, ResumeAnswer } from '../api-types.js';
import { api, type ApiError } from '../api.js';
import { Dialog } from '../components/Dialog.js';
import { Loading } from '../components/Loading.js';
import { ErrorNotice } from '../components/Notice.js';
import { useAction } from '../hooks.js';
import { connectionApi } from './paths.js';
import { countText, type DeliveryCount } from './useDeliveryCount.js';

/** The choice to send the skipped deliveries too, once their count is known. */
function ReplayChoice({
  skipped,
  replay,
  onReplay,
}: {
  skipped: DeliveryCount | null | undefined;
  replay: boolean;
  onReplay: (replay: boolean) => void;
}) {
  if (!skipped) return <Loading what="Counting the skipped deliveries" />;
  if (skipped.count === 0) {
    return <p>No delivery was skipped while it was paused: it simply delivers new events again.</p>;
  }
  return (
    <>
      <p>
        While it was paused, <strong>{countText(skipped, 'delivery was', 'deliveries were')}</strong> skipped.
      </p>
      <label class="check choice-box">
        <input type="checkbox" checked={replay} onChange={(event) => onReplay(event.currentTarget.checked)} />
        <span>
          Send the skipped deliveries too
          <span class="field-hint">
            Oldest first, each with its attempts kept. Otherwise they stay skipped.
          </span>
        </span>
      </label>
    </>
  );
}

/** Resume a paused connection, offering to send what was skipped meanwhile (and saying how much). */
export function ResumeDialog({
  connection,
  skipped,
  countError,
  onResumed,
  onClose,
}: {
  connection: Connection;
  skipped: DeliveryCount | null | undefined;
  countError: ApiError | undefined;
  onResumed: (answer: ResumeAnswer) => void;
  onClose: () => void;
}) {
  const [replay, setReplay] = useState(true);
  // With nothing skipped there is nothing to replay; a count that arrives later sets the default again.
  useEffect(() => setReplay(Boolean(skipped && skipped.count > 0)), [skipped]);
  const resume = useAction(async () => {
    const body = { replaySkipped: replay && Boolean(skipped && skipped.count > 0) };
    onResumed(await api<ResumeAnswer>('POST', `${connectionApi(connection.id)}/resume`, { body }));
  });
  return (
    <Dialog title={`Resume deliveries to “${connection.displayName}”?`} onClose={onClose}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void resume.run();
        }}
      >
        <div class="dialog-body stack-tight">
          <p>hubgate sends new events to this receiver again.</p>
          <ErrorNotice error={countError} title="The skipped deliveries could not be counted." />
          {countError ? null : <ReplayChoice skipped={skipped} replay={replay} onReplay={setReplay} />}
        </div>
        <ErrorNotice error={resume.error} title="Deliveries were not resumed." />
        <div class="dialog-actions">
          <button type="button" class="button" onClick={onClose} disabled={resume.busy}>
            Cancel
          </button>
          <button
            type="submit"
            class="button button-primary"
            // The choice is made knowing the count: until it is known there is none to make.
            disabled={resume.busy || (!skipped && !countError)}
            aria-busy={resume.busy}
          >
            {resume.busy ? 'Resuming…' : 'Resume deliveries'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
