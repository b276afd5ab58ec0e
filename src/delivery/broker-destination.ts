import type { RenderedPublish } from '../connections/connector.js';
import type { Budget } from '../deadline.js';
import { REDACTED } from '../outbound/redact.js';
import { classify, resolveChecked, type Resolver, type SendError } from '../outbound/sender.js';
import { checkAddress, parseIpLiteral, type DestinationPolicy } from '../outbound/ssrf-policy.js';
import {
  createSessionPool,
  DEFAULT_SESSION_POOL,
  sessionFingerprint,
  type BrokerSession,
  type SessionPoolOptions,
} from './broker-sessions.js';
import type { AttemptResult, Destination } from './destination.js';
import type { PreparedRequest } from './prepare.js';

// What every broker destination (amqp, nats, redis, mqtt; contract §21) does the same way around its
// own client: plaintext refused unless the hub allows it, §8 on the broker's address, one kept session
// per connection, the attempt's budget on opening and on publishing, and the words of a failure with
// the connection's secrets taken out. Each broker brings how it opens a session and publishes on it.

/** A failure a broker destination has put in words itself (its words are kept as they are). */
export class BrokerFailure extends Error {
  constructor(
    readonly error: SendError,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/** One open session with a broker, as the pool keeps it. */
export interface PublishSession extends BrokerSession {
  readonly remoteAddress: string;
  /** Publishes the message; answers what the broker said of it. `timeoutMs`: the budget left. */
  publish(message: RenderedPublish, timeoutMs: number): Promise<string>;
}

/** A broker URL's host, without the brackets of an IPv6 literal. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * §8 on the broker's address itself, at every connect: a literal is judged as it is, a name by each
 * of its addresses, and the one checked is the one connected to (a second answer cannot rebind).
 */
export async function checkedAddress(host: string, policy: DestinationPolicy, resolve: Resolver | undefined) {
  if (!parseIpLiteral(host)) return (await resolveChecked(host, policy.allowedCidrs, resolve)).address;
  const verdict = checkAddress(host, policy.allowedCidrs);
  if (!verdict.allowed) {
    throw new BrokerFailure(
      'destination_forbidden',
      `address ${host} is in a refused range: ${verdict.range}`,
    );
  }
  return host;
}

// A clean close waits for the broker's answer (AMQP's close-ok, Redis's replies still due, NATS's
// flush, MQTT's DISCONNECT written), which a broker gone away never gives.
const CLOSE_WAIT_MS = 1_000;

/**
 * Closes a session's client cleanly with `close`, or, when that has not ended within CLOSE_WAIT_MS,
 * with `drop` (its socket destroyed): a session closed for a revoke, pause or edit is gone well within
 * §21's 5 seconds even when the broker no longer answers. A failed clean close counts as closed.
 */
export async function closeWithin(close: () => Promise<unknown>, drop: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), CLOSE_WAIT_MS)));
  const closed = close().then(
    () => 'closed' as const,
    () => 'closed' as const,
  );
  const how = await Promise.race([closed, waited]);
  clearTimeout(timer);
  if (how === 'late') drop();
}

/** Where and how long opening a session may take: the attempt's budget left when it starts. */
export interface Opening {
  connectionId: string;
  policy: DestinationPolicy;
  resolve: Resolver | undefined;
  timeoutMs: number;
}

/** Settles as `work` does, or rejects with a TimeoutError once the budget is spent. */
function within<T>(work: Promise<T>, budget: Budget): Promise<T> {
  if (budget.signal.aborted) return Promise.reject(budget.signal.reason as Error);
  return new Promise<T>((resolveWork, reject) => {
    const onAbort = () => reject(budget.signal.reason as Error);
    budget.signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        budget.signal.removeEventListener('abort', onAbort);
        resolveWork(value);
      },
      (error: unknown) => {
        budget.signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** How one broker puts an error its client threw in words. */
export interface BrokerWords {
  /** What the broker did not answer in time once the session was open: `no PubAck from JetStream`. */
  noAnswer: string;
  /** The client's own words for an error classify() knows only as "the connection failed". */
  wordsOf(error: unknown): string | undefined;
  /** A timeout the client reports in its own way, besides the budget's. */
  timedOut?(error: unknown): boolean;
}

/** An error's words with every secret of the connection taken out; `connected`: the session was open. */
function failed(
  error: unknown,
  secrets: readonly string[],
  connected: boolean,
  words: BrokerWords,
): { error: SendError; detail: string } {
  const own = error instanceof BrokerFailure;
  const known = own ? { error: error.error, detail: error.detail } : classify(error);
  let { detail } = known;
  const timedOut = known.error === 'timeout' || (words.timedOut?.(error) ?? false);
  if (timedOut) {
    detail = connected
      ? `${words.noAnswer} within DELIVERY_TIMEOUT_MS`
      : 'the broker did not let hubgate connect and log in within DELIVERY_TIMEOUT_MS';
  } else if (!own && detail === 'the connection failed') detail = words.wordsOf(error) ?? detail;
  for (const secret of secrets) detail = detail.split(secret).join(REDACTED);
  return { error: timedOut ? 'timeout' : known.error, detail };
}

/** An attempt's result from what it came to, timed from `started`; a broker has no HTTP status. */
const resultOf = (
  started: number,
  fields: Omit<AttemptResult, 'durationMs' | 'retryAfterSeconds' | 'status'>,
): AttemptResult => ({
  ...fields,
  status: null,
  retryAfterSeconds: null,
  durationMs: Math.round(performance.now() - started),
});

export interface BrokerDestinationOptions {
  policy: DestinationPolicy;
  resolve?: Resolver;
  sessions?: SessionPoolOptions;
}

/** What makes a broker destination one broker's. */
export interface Broker<S extends PublishSession> extends BrokerWords {
  /** The broker's name in words: `AMQP`. */
  name: string;
  /** The URL scheme that is TLS (`amqps:`); every other is plaintext. */
  tlsProtocol: string;
  /** Why a plaintext URL is refused, in the broker's words. */
  plaintextRefused: string;
  /** Opens a session at the checked address, within the opening's time. */
  openSession(publish: RenderedPublish, opening: Opening): Promise<S>;
}

/** A broker's destination: publishes over kept sessions, one per connection, within each attempt's budget. */
export function brokerDestination<S extends PublishSession>(
  broker: Broker<S>,
  options: BrokerDestinationOptions,
): Destination {
  const pool = createSessionPool<S>(options.sessions ?? DEFAULT_SESSION_POOL);
  const { policy, resolve } = options;
  return {
    async send(prepared: PreparedRequest, budget: Budget): Promise<AttemptResult> {
      const started = performance.now();
      const { request } = prepared;
      if (request.method !== 'PUBLISH')
        throw new Error(`an HTTP request reached the ${broker.name} destination`);
      const failure = (error: SendError, errorDetail: string, remoteAddress: string | null = null) =>
        resultOf(started, { ok: false, remoteAddress, error, errorDetail, response: null });
      if (new URL(request.broker.url).protocol !== broker.tlsProtocol && !policy.allowHttp) {
        return failure('destination_forbidden', broker.plaintextRefused);
      }
      const { username, password, token } = request.broker;
      const fingerprint = sessionFingerprint(request.broker.url, username, password, token);
      const { connectionId } = prepared;
      const open = () =>
        broker.openSession(request, { connectionId, policy, resolve, timeoutMs: budget.remainingMs() });
      let session: S | undefined;
      try {
        // The session stays in use (neither idle nor evicted) until the publish has its answer.
        const published = await within(
          pool.use(connectionId, fingerprint, open, async (opened) => {
            // Opened after the budget ran out (its opening is shared): nothing is published on it.
            budget.signal.throwIfAborted();
            session = opened;
            return { opened, words: await within(opened.publish(request, budget.remainingMs()), budget) };
          }),
          budget,
        );
        const response = { headers: {}, body: published.words, bodyTruncated: false };
        return resultOf(started, {
          ok: true,
          remoteAddress: published.opened.remoteAddress,
          error: null,
          errorDetail: null,
          response,
        });
      } catch (error) {
        const { error: code, detail } = failed(error, prepared.secrets, session !== undefined, broker);
        // A session that closed under a publish is not used again, nor one that did not answer in time
        // (a broker that stopped answering would time out every attempt until its heartbeat, pings or
        // keepalive noticed); a refused message leaves it open.
        if (session && (!session.isOpen() || code === 'timeout')) pool.discard(connectionId, session);
        return failure(code, detail, session?.remoteAddress ?? null);
      }
    },
    close: () => pool.close(),
  };
}
