// Operating a connection's deliveries (docs/api/events.md): pause, resume (replaying what was skipped),
// and recover a range of failed deliveries with the count of what it matches before confirming.
import { useMemo, useState } from 'preact/hooks';
import { api, type Answer, type ApiError } from '../common/api.js';
import { ConfirmDialog, Dialog } from '../common/Dialog.js';
import { Field } from '../common/Field.js';
import { useAction } from '../common/hooks.js';
import { ErrorNotice, Loading } from '../common/Notice.js';
import { routes, type Connection, type ResumeAnswer } from '../common/routes.js';
import {
  countText,
  DAY_MS,
  fromLocalInput,
  HOUR_MS,
  timeZoneName,
  toLocalInput,
  useDeliveryCount,
  type DeliveryCount,
} from './log.js';

type RecoverAnswer = Answer<typeof routes.deliveries.recover>;

/** "Pause deliveries to “Orders webhook”?": what pausing does, and that resuming can send it all. */
export function PauseDialog({
  connection,
  onPaused,
  onClose,
}: {
  connection: Connection;
  onPaused: (connection: Connection) => void;
  onClose: () => void;
}) {
  const pause = useAction(async () => {
    onPaused(await api(routes.connections.pause, { params: { id: connection.id } }));
  });
  return (
    <ConfirmDialog
      title={`Pause deliveries to “${connection.displayName}”?`}
      confirmLabel="Pause deliveries"
      busy={pause.busy}
      onConfirm={() => void pause.run()}
      onClose={onClose}
      error={<ErrorNotice error={pause.error} title="Deliveries were not paused." />}
    >
      <p>
        hubgate stops delivering through this connection. Deliveries waiting to be sent or retried, and every
        event published while it is paused, are kept as <strong>skipped</strong>.
      </p>
      <p class="muted">
        When you resume, you choose whether the skipped deliveries are sent then, oldest first.
      </p>
    </ConfirmDialog>
  );
}

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
  // The default follows the count (nothing skipped, nothing to replay) until the person chooses: derived
  // in the render that shows the count, not set by an effect after it, so the box and the count it
  // belongs to are never seen apart (a test read the box between the two, on a loaded machine).
  const [chosen, setReplay] = useState<boolean | null>(null);
  const replay = chosen ?? Boolean(skipped && skipped.count > 0);
  const resume = useAction(async () => {
    const body = { replaySkipped: replay && Boolean(skipped && skipped.count > 0) };
    onResumed(await api(routes.connections.resume, { params: { id: connection.id }, body }));
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
          <p>hubgate delivers new events through this connection again.</p>
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

// The time range of "Recover failed deliveries" (docs/api/events.md): since at most 14 days back, until
// (default now), by the deliveries' created time.

const RANGES = [
  { value: '1h', label: 'Last hour', ms: HOUR_MS },
  { value: '24h', label: 'Last 24 hours', ms: DAY_MS },
  { value: '3d', label: 'Last 3 days', ms: 3 * DAY_MS },
  { value: '7d', label: 'Last 7 days', ms: 7 * DAY_MS },
  { value: '14d', label: 'Last 14 days', ms: 14 * DAY_MS },
  { value: 'custom', label: 'Custom range…', ms: 0 },
] as const;

type RangeChoice = (typeof RANGES)[number]['value'];

/** The API refuses a `since` more than 14 days back; a minute's room covers the time to confirm. */
const MAX_BACK_MS = 14 * DAY_MS - 60_000;

interface RecoverRange {
  choice: RangeChoice;
  /** datetime-local values, for a custom range. */
  since: string;
  until: string;
}

/** The range as the API takes it at `now`, or why it cannot be sent. */
function rangeAt(
  range: RecoverRange,
  now: number,
): { since: string; until?: string } | { problem: 'since' | 'until'; message: string } {
  const preset = RANGES.find((r) => r.value === range.choice);
  if (preset && preset.value !== 'custom') {
    return { since: new Date(now - Math.min(preset.ms, MAX_BACK_MS)).toISOString() };
  }
  const since = fromLocalInput(range.since);
  const until = fromLocalInput(range.until);
  if (!since) return { problem: 'since', message: 'Enter the start of the range.' };
  if (Date.parse(since) < now - MAX_BACK_MS) {
    return { problem: 'since', message: 'Choose a start at most 14 days ago.' };
  }
  if (until && Date.parse(until) <= Date.parse(since)) {
    return { problem: 'until', message: 'Choose an end after the start.' };
  }
  return until ? { since, until } : { since };
}

const RECOVER_STATUSES = ['failed', 'skipped'] as const;
type RecoverStatus = (typeof RECOVER_STATUSES)[number];

/**
 * "Recover failed deliveries" of connection `id`: the range and statuses chosen, the count of what they match
 * (counted again as they change), and the request that queues them again.
 */
function useRecover(id: string, onRecovered: (answer: RecoverAnswer) => void) {
  // A preset range counts back from when it was chosen; the request counts back from when it is sent.
  const [chosenAt, setChosenAt] = useState(() => Date.now());
  const [range, setRangeState] = useState<RecoverRange>(() => ({
    choice: '24h',
    since: toLocalInput(Date.now() - 24 * 3600 * 1000),
    until: '',
  }));
  const [statuses, setStatuses] = useState<RecoverStatus[]>(['failed']);
  const setRange = (next: Partial<RecoverRange>) => {
    setChosenAt(Date.now());
    setRangeState((current) => ({ ...current, ...next }));
  };
  const checked = useMemo(() => rangeAt(range, chosenAt), [range, chosenAt]);
  const query = useMemo(
    () => ('problem' in checked || statuses.length === 0 ? null : { status: statuses.join(','), ...checked }),
    [checked, statuses],
  );
  const count = useDeliveryCount(id, query);

  const recover = useAction(async () => {
    const now = rangeAt(range, Date.now());
    if ('problem' in now) return;
    onRecovered(await api(routes.deliveries.recover, { params: { id }, body: { ...now, statuses } }));
  });
  const toggleStatus = (status: RecoverStatus, on: boolean) =>
    setStatuses((current) => RECOVER_STATUSES.filter((s) => (s === status ? on : current.includes(s))));
  return {
    range,
    setRange,
    statuses,
    toggleStatus,
    problem: 'problem' in checked ? checked : null,
    count,
    recover,
  };
}

type Recover = ReturnType<typeof useRecover>;

const STATUS_WORDS: Record<RecoverStatus, { label: string; hint: string }> = {
  failed: { label: 'Failed', hint: 'Every attempt failed, or the receiver answered 410 Gone.' },
  skipped: { label: 'Skipped while paused', hint: 'Kept, not sent, while the connection was paused.' },
};

/** A custom range: from (at most 14 days back) and to (empty: now), in the browser's time zone. */
function CustomRange({ state }: { state: Recover }) {
  const { range, setRange, problem } = state;
  const now = Date.now();
  return (
    <div class="range-fields">
      <Field label="From" error={problem?.problem === 'since' ? problem.message : undefined}>
        {({ id, describedBy, invalid }) => (
          <input
            id={id}
            type="datetime-local"
            required
            min={toLocalInput(now - 14 * 24 * 3600 * 1000 + 60_000)}
            max={toLocalInput(now)}
            value={range.since}
            aria-describedby={describedBy}
            aria-invalid={invalid || undefined}
            onChange={(event) => setRange({ since: event.currentTarget.value })}
          />
        )}
      </Field>
      <Field
        label="To (optional)"
        hint={`Empty: until now. Times are in ${timeZoneName()}.`}
        error={problem?.problem === 'until' ? problem.message : undefined}
      >
        {({ id, describedBy, invalid }) => (
          <input
            id={id}
            type="datetime-local"
            value={range.until}
            aria-describedby={describedBy}
            aria-invalid={invalid || undefined}
            onChange={(event) => setRange({ until: event.currentTarget.value })}
          />
        )}
      </Field>
    </div>
  );
}

/** The range (a preset or custom) and the statuses of the deliveries to send again. */
function RecoverFields({ state }: { state: Recover }) {
  const { range, setRange, statuses, toggleStatus } = state;
  return (
    <>
      <Field label="Created in" hint="Up to 14 days back.">
        {({ id, describedBy }) => (
          <select
            id={id}
            aria-describedby={describedBy}
            value={range.choice}
            onChange={(event) => setRange({ choice: event.currentTarget.value as RangeChoice })}
          >
            {RANGES.map((r) => (
              <option key={r.value} value={r.value}>
                {r.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      {range.choice === 'custom' ? <CustomRange state={state} /> : null}
      <fieldset class="choice-group">
        <legend>Deliveries to send again</legend>
        {(['failed', 'skipped'] as const).map((status) => (
          <label key={status} class="check">
            <input
              type="checkbox"
              checked={statuses.includes(status)}
              onChange={(event) => toggleStatus(status, event.currentTarget.checked)}
            />
            <span>
              {STATUS_WORDS[status].label}
              <span class="field-hint">{STATUS_WORDS[status].hint}</span>
            </span>
          </label>
        ))}
      </fieldset>
    </>
  );
}

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
  const state = useRecover(connection.id, onRecovered);
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
          Once what made them fail is fixed (the receiver or broker, or the connection’s settings), send again
          what failed: each delivery keeps its ID and its earlier attempts, and goes to the connection’s
          current URL.
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
