import type { Budget } from '../deadline.js';
import type { Sender } from '../outbound/sender.js';
import type { AttemptResult, Destination } from './destination.js';
import type { PreparedRequest } from './prepare.js';

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
  const { request } = prepared;
  // The registry (destinations.ts) sends a broker's message to that broker's destination: a bug if not.
  if (request.method === 'PUBLISH')
    throw new Error(`a ${request.destination} message reached the HTTP destination`);
  const started = performance.now();
  const result = await sender.send({ ...request, keepBodyBytes, redact: prepared.secrets, budget });
  return { ...result, durationMs: Math.round(performance.now() - started) };
}

/**
 * The HTTP destination (every connector that renders an HTTP request): `send` through the outbound
 * sender, keeping `keepBodyBytes` of each answer's body for the log (DELIVERY_RESPONSE_BODY_BYTES).
 */
export function httpDestination(sender: Pick<Sender, 'send' | 'close'>, keepBodyBytes: number): Destination {
  return {
    send: (prepared, budget) => send(sender, prepared, keepBodyBytes, budget),
    close: () => sender.close(),
  };
}
