import { createClient, ErrorReply } from 'redis';
import type { RenderedPublish } from '../connections/connector.js';
import { within as withinMs } from '../deadline.js';
import { parseIpLiteral } from '../outbound/ssrf-policy.js';
import {
  brokerDestination,
  BrokerFailure,
  checkedAddress,
  closeWithin,
  hostOf,
  type BrokerDestinationOptions,
  type Opening,
  type PublishSession,
} from './broker-destination.js';
import type { Destination } from './destination.js';

// Redis Streams (contract §21, docs/decisions/0083): one client connection per hubgate connection
// (broker-sessions.ts); each event is one XADD, delivered once Redis answers the entry's ID. An error
// reply (a key of another type, an ACL that forbids it, out of memory, a read-only replica), a login
// Redis refuses and a connection that dies fail the attempt, and each says why in words.

/** One logged-in connection to Redis, on the database of the URL. */
interface RedisSession extends PublishSession {
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

/** The client for the checked address: no reconnect of its own and no queue while it is down. */
function clientFor(publish: RenderedPublish, address: string, timeoutMs: number) {
  const url = new URL(publish.broker.url);
  const host = hostOf(url);
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

/** Closes a client once the replies still due came, or drops its socket when they do not come in time. */
const closeBounded = (client: Client) =>
  closeWithin(
    () => client.close(),
    // destroy() is idempotent: nothing to do for a client already closed.
    () => client.destroy(),
  );

async function openSession(publish: RenderedPublish, opening: Opening): Promise<RedisSession> {
  const started = performance.now();
  const url = new URL(publish.broker.url);
  const address = await checkedAddress(hostOf(url), opening.policy, opening.resolve);
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
      throw new BrokerFailure('connection_error', `the broker refused the credentials: ${words}`);
    }
    if (error instanceof ErrorReply)
      throw new BrokerFailure('connection_error', `the broker refused the connection: ${words}`);
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
          throw new BrokerFailure('connection_error', `the broker refused ${what}: ${words}`);
        }
        // The connection died under the command: what the socket said, if it said more.
        throw new BrokerFailure(
          'connection_error',
          lastWords && lastWords !== words ? `${words}: ${lastWords}` : words,
        );
      }
    },
  };
}

const PLAINTEXT_REFUSED = 'redis: (no TLS) is refused unless DELIVERY_ALLOW_HTTP=true; use rediss:';

/** The `redis` connector's destination: XADD over kept sessions, delivered on the entry ID. */
export function redisDestination(options: BrokerDestinationOptions): Destination {
  return brokerDestination(
    {
      name: 'Redis',
      tlsProtocol: 'rediss:',
      plaintextRefused: PLAINTEXT_REFUSED,
      openSession,
      noAnswer: 'no answer from the broker',
      wordsOf,
      // node-redis's own connect timeout names itself; the bound on the login is an ETIMEDOUT (classify).
      timedOut: (error) => /ConnectionTimeoutError|Connection timeout/.test(String(error)),
    },
    options,
  );
}
