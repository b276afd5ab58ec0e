import { jetstream, JetStreamApiError, type JetStreamClient } from '@nats-io/jetstream';
import { connect, errors, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
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

// NATS JetStream (contract §21, docs/decisions/0082): one NATS connection per hubgate connection
// (broker-sessions.ts), opened with no reconnect of its own (the next attempt is the reconnect, 0080)
// and no server list from the cluster (every address hubgate connects to is one it checked). A message
// is delivered once a stream acknowledges it (PubAck); a subject no stream takes, a stream's refusal,
// a refused login or a connection that died fail the attempt, and each says why in words.

class Failure extends Error {
  constructor(
    readonly error: SendError,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/** One open connection to a NATS server and its JetStream client. */
interface NatsSession extends BrokerSession {
  readonly remoteAddress: string;
  publish(message: RenderedPublish, timeoutMs: number): Promise<string>;
}

/**
 * §8 on the broker's address itself, at every connect: a literal is judged as it is, a name by each
 * of its addresses, and the one checked is the one connected to (a second answer cannot rebind).
 */
async function checkedAddress(host: string, policy: DestinationPolicy, resolve: Resolver | undefined) {
  if (!parseIpLiteral(host)) return (await resolveChecked(host, policy.allowedCidrs, resolve)).address;
  const verdict = checkAddress(host, policy.allowedCidrs);
  if (!verdict.allowed) {
    throw new Failure('destination_forbidden', `address ${host} is in a refused range: ${verdict.range}`);
  }
  return host;
}

/** Where and how long opening a session may take: the attempt's budget left when it starts. */
interface Opening {
  policy: DestinationPolicy;
  resolve: Resolver | undefined;
  timeoutMs: number;
}

const DEFAULT_PORT = 4222;
// A clean close flushes first, which a server gone away never lets finish.
const CLOSE_WAIT_MS = 1_000;

/** Closes a connection, waiting at most CLOSE_WAIT_MS for the flush (the socket is closed either way). */
async function closeBounded(connection: NatsConnection): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)));
  await Promise.race([connection.close().catch(() => undefined), waited]);
  clearTimeout(timer);
}

/** Connects and logs in to the checked address; a refused login says so. */
async function openSession(publish: RenderedPublish, { policy, resolve, timeoutMs }: Opening) {
  const url = new URL(publish.broker.url);
  const tls = url.protocol === 'tls:';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const address = await checkedAddress(host, policy, resolve);
  const port = url.port ? Number(url.port) : DEFAULT_PORT;
  const { username, password, token } = publish.broker;
  // Node's TLS options, which the client passes on (its type names only its own).
  const nodeTls = { rejectUnauthorized: true, servername: parseIpLiteral(host) ? undefined : host };
  let connection: NatsConnection;
  try {
    connection = await connect({
      servers: address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`,
      name: 'hubgate',
      // hubgate's reconnect is the next attempt (decision 0080); the client's own would hold attempts
      // in flight while the server is away, and a server's gossiped addresses were never checked.
      reconnect: false,
      ignoreClusterUpdates: true,
      noEcho: true,
      timeout: Math.max(1, Math.round(timeoutMs)),
      ...(username === undefined ? {} : { user: username }),
      ...(password === undefined ? {} : { pass: password }),
      ...(token === undefined ? {} : { token }),
      // tls: must be TLS; TLS checks the certificate against the name in the URL, not the address
      // connected to. nats: never upgrades (null), so plaintext is what the hub allowed.
      tls: tls ? nodeTls : null,
    });
  } catch (error) {
    if (error instanceof errors.AuthorizationError || /Authorization Violation/i.test(String(error))) {
      throw new Failure(
        'connection_error',
        `the broker refused the credentials: ${(error as Error).message}`,
      );
    }
    throw error;
  }
  const client: JetStreamClient = jetstream(connection);
  const session: NatsSession = {
    remoteAddress: address,
    isOpen: () => !connection.isClosed(),
    close: () => closeBounded(connection),
    publish: async (message, publishTimeoutMs) => {
      const { subject = '' } = message.target;
      const sent = natsHeaders();
      for (const [name, value] of Object.entries(message.headers)) sent.set(name, value);
      try {
        const ack = await client.publish(subject, message.body, {
          headers: sent,
          timeout: Math.max(1, Math.round(publishTimeoutMs)),
        });
        return `stream ${ack.stream} seq ${ack.seq}${ack.duplicate ? ' (duplicate)' : ''}`;
      } catch (error) {
        throw publishFailure(error, subject, connection.isClosed());
      }
    },
  };
  return session;
}

/**
 * A publish that got no PubAck, in words: no stream, the stream's refusal, the connection that closed
 * under it (`closed`: a server gone away fails the publishes in flight at once), or what the client said.
 */
function publishFailure(error: unknown, subject: string, closed: boolean): unknown {
  // No responders: nothing listens on the subject, which for JetStream means no stream takes it (the
  // client calls that "jetstream is not enabled", an error class it does not export).
  const noResponders =
    (error as { name?: string } | undefined)?.name === 'JetStreamNotEnabled' ||
    (error instanceof errors.RequestError && error.isNoResponders()) ||
    error instanceof errors.NoRespondersError;
  if (noResponders) {
    return new Failure(
      'connection_error',
      `no JetStream stream takes the subject ${subject} (no responders)`,
    );
  }
  if (error instanceof JetStreamApiError) {
    return new Failure('connection_error', `the stream refused the message: ${error.message}`);
  }
  if (error instanceof errors.InvalidSubjectError) {
    return new Failure('connection_error', `the subject ${subject} is not a valid NATS subject`);
  }
  if (closed || error instanceof errors.ClosedConnectionError) {
    return new Failure('connection_error', 'the connection to the broker closed before its PubAck');
  }
  return error;
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

/** An error's words with every secret of the connection taken out; `connected`: the session was open. */
function failed(
  error: unknown,
  secrets: readonly string[],
  connected: boolean,
): { error: SendError; detail: string } {
  const known = error instanceof Failure ? { error: error.error, detail: error.detail } : classify(error);
  let { detail } = known;
  if (known.error === 'timeout') {
    detail = connected
      ? 'no PubAck from JetStream within DELIVERY_TIMEOUT_MS'
      : 'the broker did not let hubgate connect and log in within DELIVERY_TIMEOUT_MS';
  } else if (!(error instanceof Failure) && detail === 'the connection failed') {
    const message = (error as { message?: string } | undefined)?.message;
    if (message) detail = message;
  }
  for (const secret of secrets) detail = detail.split(secret).join(REDACTED);
  return { error: known.error, detail };
}

export interface NatsDestinationOptions {
  policy: DestinationPolicy;
  resolve?: Resolver;
  sessions?: SessionPoolOptions;
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

const PLAINTEXT_REFUSED = 'nats: (no TLS) is refused unless DELIVERY_ALLOW_HTTP=true; use tls:';

/** The `nats` connector's destination: publishes to JetStream over kept connections. */
export function natsDestination(options: NatsDestinationOptions): Destination {
  const pool = createSessionPool<NatsSession>(options.sessions ?? DEFAULT_SESSION_POOL);
  const { policy, resolve } = options;
  return {
    async send(prepared: PreparedRequest, budget: Budget): Promise<AttemptResult> {
      const started = performance.now();
      const { request } = prepared;
      if (request.method !== 'PUBLISH') throw new Error('an HTTP request reached the NATS destination');
      const failure = (error: SendError, errorDetail: string, remoteAddress: string | null = null) =>
        resultOf(started, { ok: false, remoteAddress, error, errorDetail, response: null });
      if (new URL(request.broker.url).protocol !== 'tls:' && !policy.allowHttp) {
        return failure('destination_forbidden', PLAINTEXT_REFUSED);
      }
      const { username, password, token } = request.broker;
      const fingerprint = sessionFingerprint(request.broker.url, username, password, token);
      const open = () => openSession(request, { policy, resolve, timeoutMs: budget.remainingMs() });
      let session: NatsSession | undefined;
      try {
        session = await within(pool.acquire(prepared.connectionId, fingerprint, open), budget);
        const words = await within(session.publish(request, budget.remainingMs()), budget);
        const response = { headers: {}, body: words, bodyTruncated: false };
        return resultOf(started, {
          ok: true,
          remoteAddress: session.remoteAddress,
          error: null,
          errorDetail: null,
          response,
        });
      } catch (error) {
        const { error: code, detail } = failed(error, prepared.secrets, session !== undefined);
        // A session that closed is not used again, nor one that gave no PubAck in time (a server that
        // stopped answering would time out every attempt until its pings ran out); a refused message
        // leaves it open.
        if (session && (!session.isOpen() || code === 'timeout'))
          pool.discard(prepared.connectionId, session);
        return failure(code, detail, session?.remoteAddress ?? null);
      }
    },
    close: () => pool.close(),
  };
}
