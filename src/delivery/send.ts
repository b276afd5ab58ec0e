import type { Budget } from '../deadline.js';
import type { Sender, SendError, SendResult } from '../outbound/sender.js';
import type { PreparedRequest } from './prepare.js';

/** How an attempt failed (docs/api/events.md `error`): what the sender saw, or a worker that died mid-attempt. */
export type AttemptResult = Omit<SendResult, 'error'> & { error: SendError | 'interrupted' | null };

/**
 * Sends a prepared request (the sender pins the checked address, applies the timeout and the
 * destination policy), within the attempt's `budget`: every call the attempt makes (a token request,
 * the send, a token request again after a 401 and a send again) draws on it, and none is open once
 * it is spent (claim.ts, `attemptDeadline`). The answer the log keeps has the connection's secrets
 * taken out. Touches no database, and never throws for what the receiver or the network did: every
 * failure is a result, timed from the first call to the end of the last.
 */
export async function send(
  sender: Pick<Sender, 'send'>,
  prepared: PreparedRequest,
  keepBodyBytes: number,
  budget: Budget,
): Promise<AttemptResult> {
  const started = performance.now();
  const result = await sender.send({ ...prepared.request, keepBodyBytes, redact: prepared.secrets, budget });
  return { ...result, durationMs: Math.round(performance.now() - started) };
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
