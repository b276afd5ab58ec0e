import type { AppContext } from '../context.js';
import { errorFields } from '../logger.js';
import { runEvery } from '../periodic.js';
import { CHALLENGE_TTL_MS } from './relying-party.js';
import { deleteExpiredChallenges } from './store.js';

/**
 * Deletes the challenges nobody used, as often as they expire: sign-in options are public, so
 * unused challenges pile up at the rate the per-address limit lets clients ask for them.
 */
export function startChallengeRetention(
  ctx: Pick<AppContext, 'db' | 'log' | 'now'>,
  intervalMs = CHALLENGE_TTL_MS,
): { stop(): Promise<void> } {
  return runEvery(intervalMs, () =>
    deleteExpiredChallenges(ctx.db, ctx.now())
      .then((deleted) => {
        if (deleted > 0) ctx.log.debug({ deleted }, 'expired passkey challenges deleted');
      })
      .catch((error: unknown) => ctx.log.warn(errorFields(error), 'passkey challenge purge failed')),
  );
}
