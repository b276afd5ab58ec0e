import type { Sender, SendError, SendResult } from '../outbound/sender.js';
import type { PreparedRequest } from './prepare.js';

/** How an attempt failed (docs/api/events.md `error`): what the sender saw, or a worker that died mid-attempt. */
export type AttemptResult = Omit<SendResult, 'error'> & { error: SendError | 'interrupted' | null };

/**
 * Sends a prepared request (the sender pins the checked address, applies the timeout and the
 * destination policy). Touches no database, and never throws for what the receiver or the network
 * did: every failure is a result.
 */
export function send(
  sender: Pick<Sender, 'send'>,
  prepared: PreparedRequest,
  keepBodyBytes: number,
): Promise<AttemptResult> {
  return sender.send({ ...prepared.request, keepBodyBytes });
}

/**
 * The attempt of a claim that ran out with no outcome recorded: its worker died (or lost the
 * database) mid-attempt, and the receiver may have had the request. It counts like any failed one,
 * as long as the claim lasted, so attempt numbers match what the receiver may have seen.
 */
export function interruptedResult(claimedAt: Date, claimEnded: Date): AttemptResult {
  const heldMs = Math.max(0, claimEnded.getTime() - claimedAt.getTime());
  return {
    ok: false,
    status: null,
    remoteAddress: null,
    error: 'interrupted',
    errorDetail: `the worker stopped before recording an outcome; its claim expired after ${Math.round(heldMs / 1000)} s`,
    retryAfterSeconds: null,
    durationMs: heldMs,
  };
}
