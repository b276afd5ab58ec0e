import { createClient, ErrorReply } from 'redis';
import type { RenderedPublish } from '../connections/connector.js';
import { within as withinMs, type Budget } from '../deadline.js';
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

// Redis Streams (contract §21, docs/decisions/0083): one client connection per hubgate connection
// (broker-sessions.ts); each event is one XADD, delivered once Redis answers the entry's ID. An error
// reply (a key of another type, an ACL that forbids it, out of memory, a read-only replica), a login
// Redis refuses and a connection that dies fail the attempt, and each says why in words.

class Failure extends Error {
  constructor(
    readonly error: SendError,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/** One logged-in connection to Redis, on the database of the URL. */
interface RedisSession extends BrokerSession {
  readonly remoteAddress: string;
  /** Appends the message to its stream; answers the entry ID Redis gave it. */
  publish(message: RenderedPublish): Promise<string>;
}

// The stream fields §21 names, in this order; every other header (traceparent) follows them.
const FIRST_FIELDS = ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-type'] as const;

/** XADD's arguments: the stream, the approximate trim if any, `*` (Redis picks the ID), the fields. */
export function xaddArguments(message: RenderedPublish): string[] {
  const { stream = '', maxLen } = message.target;
  const fields: string[] = [];
  for (const name of FIRST_FIELDS) {
    const value = message.headers[name];
    if (value !== undefined) fields.push(name, value);
  }
  fields.push('body', message.body);
  for (const [name, value] of Object.entries(message.headers)) {
    if (!(FIRST_FIELDS as readonly string[]).includes(name) && name !== 'body') fields.push(name, value);
  }
  return ['XADD', stream, ...(maxLen === undefined ? [] : ['MAXLEN', '~', maxLen]), '*', ...fields];
}

// Replies that say the login is what Redis refused: a wrong user or password (WRONGPASS), none where one
// is needed (NOAUTH), or AUTH on a server with no password set.
const CREDENTIALS_REFUSED = /^(WRONGPASS|NOAUTH)|AUTH <password> called without any password/;

/** What Redis (or the socket) said, as one line. */
const wordsOf = (error: unknown) =>
  String((error as { message?: string } | undefined)?.message ?? 'closed').replace(/\s+/g, ' ');

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

/** The client for the checked address: no reconnect of its own and no queue while it is down. */
function clientFor(publish: RenderedPublish, address: string, timeoutMs: number) {
  const url = new URL(publish.broker.url);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const path = url.pathname.slice(1);
  const common = {
    host: address,
    port: url.port ? Number(url.port) : 6379,
    connectTimeout: Math.max(1, Math.round(timeoutMs)),
    // The next attempt reconnects (decision 0080): a client reconnecting by itself would keep a dead
    // session looking alive and hold commands meanwhile.
    reconnectStrategy: false as const,
  };
  return createClient({
    // TLS checks the certificate against the name in the URL, not the address connected to.
    socket:
      url.protocol === 'rediss:'
        ? { ...common, tls: true as const, ...(parseIpLiteral(host) ? {} : { servername: host }) }
        : common,
    username: publish.broker.username,
    password: publish.broker.password,
    database: path === '' ? 0 : Number(path),
    // RESP2: AUTH and SELECT, which every Redis with streams (5.0 and later) understands; HELLO is 6.0's.
    RESP: 2,
    // A command while the connection is down fails at once rather than waiting for a reconnect.
    disableOfflineQueue: true,
    // No CLIENT SETINFO: one round trip less, and nothing an ACL that allows only XADD would refuse.
    disableClientInfo: true,
  });
}

type Client = ReturnType<typeof clientFor>;

// A clean close waits for the replies still due, which a server gone away never sends.
const CLOSE_WAIT_MS = 1_000;

/** Closes a client cleanly, or, when the server does not answer in time, drops its socket. */
async function closeBounded(client: Client): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), CLOSE_WAIT_MS)));
  const closed = client.close().then(
    () => 'closed' as const,
    () => 'closed' as const,
  );
  const how = await Promise.race([closed, waited]);
  clearTimeout(timer);
  // destroy() is idempotent: nothing to do for a client already closed.
  if (how === 'late') client.destroy();
}

async function openSession(publish: RenderedPublish, opening: Opening): Promise<RedisSession> {
  const started = performance.now();
  const url = new URL(publish.broker.url);
  const address = await checkedAddress(
    url.hostname.replace(/^\[(.*)\]$/, '$1'),
    opening.policy,
    opening.resolve,
  );
  const left = () => Math.max(1, opening.timeoutMs - (performance.now() - started));
  const client = clientFor(publish, address, left());
  let lastWords: string | undefined;
  let open = true;
  // Without a listener an error event would end the process; the words say why a publish failed.
  client.on('error', (error: unknown) => (lastWords = wordsOf(error)));
  client.on('end', () => (open = false));
  try {
    // Connecting, AUTH and SELECT: the socket's timeout covers the connect only, so the whole is bounded.
    await withinMs(client.connect(), left(), 'connecting and logging in to Redis');
  } catch (error) {
    // A login still under way when the budget ran out must not end up open and kept by nobody.
    client.destroy();
    const words = wordsOf(error);
    if (error instanceof ErrorReply && CREDENTIALS_REFUSED.test(words)) {
      throw new Failure('connection_error', `the broker refused the credentials: ${words}`);
    }
    if (error instanceof ErrorReply)
      throw new Failure('connection_error', `the broker refused the connection: ${words}`);
    throw error;
  }
  return {
    remoteAddress: address,
    isOpen: () => open && client.isReady,
    close: () => {
      open = false;
      return closeBounded(client);
    },
    publish: async (message) => {
      try {
        return String(await client.sendCommand(xaddArguments(message)));
      } catch (error) {
        const words = wordsOf(error);
        if (error instanceof ErrorReply) {
          const what = CREDENTIALS_REFUSED.test(words) ? 'the credentials' : 'the message';
          throw new Failure('connection_error', `the broker refused ${what}: ${words}`);
        }
        // The connection died under the command: what the socket said, if it said more.
        throw new Failure(
          'connection_error',
          lastWords && lastWords !== words ? `${words}: ${lastWords}` : words,
        );
      }
    },
  };
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
  // node-redis's own connect timeout names itself; the bound on the login is an ETIMEDOUT (classify).
  const timedOut =
    known.error === 'timeout' || /ConnectionTimeoutError|Connection timeout/.test(String(error));
  if (timedOut) {
    detail = connected
      ? 'no answer from the broker within DELIVERY_TIMEOUT_MS'
      : 'the broker did not let hubgate connect and log in within DELIVERY_TIMEOUT_MS';
  } else if (!(error instanceof Failure) && detail === 'the connection failed') detail = wordsOf(error);
  for (const secret of secrets) detail = detail.split(secret).join(REDACTED);
  return { error: timedOut ? 'timeout' : known.error, detail };
}

export interface RedisDestinationOptions {
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

const PLAINTEXT_REFUSED = 'redis: (no TLS) is refused unless DELIVERY_ALLOW_HTTP=true; use rediss:';

/** The `redis` connector's destination: XADD over kept sessions, delivered on the entry ID. */
export function redisDestination(options: RedisDestinationOptions): Destination {
  const pool = createSessionPool<RedisSession>(options.sessions ?? DEFAULT_SESSION_POOL);
  const { policy, resolve } = options;
  return {
    async send(prepared: PreparedRequest, budget: Budget): Promise<AttemptResult> {
      const started = performance.now();
      const { request } = prepared;
      if (request.method !== 'PUBLISH') throw new Error('an HTTP request reached the Redis destination');
      const failure = (error: SendError, errorDetail: string, remoteAddress: string | null = null) =>
        resultOf(started, { ok: false, remoteAddress, error, errorDetail, response: null });
      if (new URL(request.broker.url).protocol !== 'rediss:' && !policy.allowHttp) {
        return failure('destination_forbidden', PLAINTEXT_REFUSED);
      }
      const { username, password } = request.broker;
      const fingerprint = sessionFingerprint(request.broker.url, username, password);
      const open = () => openSession(request, { policy, resolve, timeoutMs: budget.remainingMs() });
      let session: RedisSession | undefined;
      try {
        session = await within(pool.acquire(prepared.connectionId, fingerprint, open), budget);
        const entryId = await within(session.publish(request), budget);
        const response = { headers: {}, body: entryId, bodyTruncated: false };
        return resultOf(started, {
          ok: true,
          remoteAddress: session.remoteAddress,
          error: null,
          errorDetail: null,
          response,
        });
      } catch (error) {
        const { error: code, detail } = failed(error, prepared.secrets, session !== undefined);
        // A session whose connection died is not used again, nor one that did not answer in time (a
        // server that stopped answering would time out every attempt); an error reply leaves it open.
        if (session && (!session.isOpen() || code === 'timeout'))
          pool.discard(prepared.connectionId, session);
        return failure(code, detail, session?.remoteAddress ?? null);
      }
    },
    close: () => pool.close(),
  };
}
