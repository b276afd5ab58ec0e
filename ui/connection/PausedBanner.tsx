import { useId } from 'preact/hooks';
import type { Connection, PausedReason } from '../api-types.js';
import { Time } from '../components/Time.js';
import { countText, type DeliveryCount } from './useDeliveryCount.js';

/** Why a connection is paused (contract §15), as the banner and the connections list say it. */
export const PAUSED_WORDS: Record<PausedReason, string> = {
  manual: 'paused by hand',
  failing: 'paused automatically after deliveries kept failing',
  gone: 'paused because the receiver answered 410 Gone',
};

/** What to do about it, for each reason. */
const ADVICE: Record<PausedReason, string> = {
  manual: 'Resume it when the receiver is ready again.',
  failing:
    'Look at the last attempts of a failed delivery to see what the receiver answered, fix the receiver, then resume.',
  gone: 'The receiver said it no longer wants these events. Resume only once it accepts them again.',
};

/** " on Nov 27, 2026, 7:05 AM (3 minutes ago)". */
function Since({ at }: { at: string }) {
  const recent = Date.now() - new Date(at).getTime() < 60_000;
  return (
    <>
      {' '}
      on <Time at={at} mode="absolute" /> ({recent ? 'just now' : <Time at={at} />})
    </>
  );
}

function SkippedSoFar({ skipped }: { skipped: DeliveryCount | null | undefined }) {
  if (!skipped) return null;
  if (skipped.count === 0) return <> No event has been skipped yet.</>;
  return <> So far {countText(skipped, 'delivery was', 'deliveries were')} skipped.</>;
}

/** The paused connection's banner: why and since when, what happens meanwhile, and what to do. */
export function PausedBanner({
  connection,
  skipped,
  canOperate,
  onResume,
  skippedHref,
  failedHref,
}: {
  connection: Connection;
  skipped: DeliveryCount | null | undefined;
  canOperate: boolean;
  onResume: () => void;
  skippedHref: string;
  failedHref: string;
}) {
  const id = useId();
  const reason = connection.pausedReason ?? 'manual';
  return (
    <section class="paused-banner" aria-labelledby={id}>
      <span class="paused-icon" aria-hidden="true" />
      <div class="paused-text">
        <h2 id={id}>Deliveries are paused</h2>
        <p>
          “{connection.displayName}” was {PAUSED_WORDS[reason]}
          {connection.pausedAt ? <Since at={connection.pausedAt} /> : null}. Nothing is sent while it is
          paused: events for it are kept as skipped deliveries.
          <SkippedSoFar skipped={skipped} />
        </p>
        <p class="muted">{ADVICE[reason]}</p>
      </div>
      <div class="paused-actions">
        {canOperate ? (
          <button type="button" class="button button-primary" onClick={onResume}>
            Resume deliveries
          </button>
        ) : null}
        {reason === 'manual' ? null : (
          <a class="button" href={failedHref}>
            Show failed deliveries
          </a>
        )}
        {skipped && skipped.count > 0 ? (
          <a class="button" href={skippedHref}>
            Show skipped deliveries
          </a>
        ) : null}
      </div>
    </section>
  );
}
