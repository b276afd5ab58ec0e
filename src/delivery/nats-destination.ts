import { jetstream, JetStreamApiError, type JetStreamClient } from '@nats-io/jetstream';
import { connect, errors, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import type { RenderedPublish } from '../connections/connector.js';
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

// NATS JetStream (contract §21, docs/decisions/0082): one NATS connection per hubgate connection
// (broker-sessions.ts), opened with no reconnect of its own (the next attempt is the reconnect, 0080)
// and no server list from the cluster (every address hubgate connects to is one it checked). A message
// is delivered once a stream acknowledges it (PubAck); a subject no stream takes, a stream's refusal,
// a refused login or a connection that died fail the attempt, and each says why in words.

/** One open connection to a NATS server and its JetStream client. */
interface NatsSession extends PublishSession {
  publish(message: RenderedPublish, timeoutMs: number): Promise<string>;
}

const DEFAULT_PORT = 4222;

/** Closes a connection, its flush awaited at most as long as closeWithin waits. */
const closeBounded = (connection: NatsConnection) =>
  closeWithin(
    () => connection.close(),
    // Nothing to drop: close() destroys the socket itself once its flush ends or fails.
    () => undefined,
  );

/**
 * Node's TLS options, which the client passes on (its type names only its own). The client starts TLS
 * on its open socket, where Node checks the certificate against `servername`, else `host`, else
 * "localhost": an IP literal (no SNI) must be given as `host`, or its certificate never matches.
 */
const tlsOptionsFor = (host: string) => ({
  rejectUnauthorized: true,
  ...(parseIpLiteral(host) ? { host } : { servername: host, host }),
});

/** Connects and logs in to the checked address; a refused login says so. */
async function openSession(publish: RenderedPublish, { policy, resolve, timeoutMs }: Opening) {
  const url = new URL(publish.broker.url);
  const tls = url.protocol === 'tls:';
  const host = hostOf(url);
  const address = await checkedAddress(host, policy, resolve);
  const port = url.port ? Number(url.port) : DEFAULT_PORT;
  const { username, password, token } = publish.broker;
  const nodeTls = tlsOptionsFor(host);
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
      throw new BrokerFailure(
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
    return new BrokerFailure(
      'connection_error',
      `no JetStream stream takes the subject ${subject} (no responders)`,
    );
  }
  if (error instanceof JetStreamApiError) {
    return new BrokerFailure('connection_error', `the stream refused the message: ${error.message}`);
  }
  if (error instanceof errors.InvalidSubjectError) {
    return new BrokerFailure('connection_error', `the subject ${subject} is not a valid NATS subject`);
  }
  if (closed || error instanceof errors.ClosedConnectionError) {
    return new BrokerFailure('connection_error', 'the connection to the broker closed before its PubAck');
  }
  return error;
}

const PLAINTEXT_REFUSED = 'nats: (no TLS) is refused unless DELIVERY_ALLOW_HTTP=true; use tls:';

/** The `nats` connector's destination: publishes to JetStream over kept connections. */
export function natsDestination(options: BrokerDestinationOptions): Destination {
  return brokerDestination(
    {
      name: 'NATS',
      tlsProtocol: 'tls:',
      plaintextRefused: PLAINTEXT_REFUSED,
      openSession,
      noAnswer: 'no PubAck from JetStream',
      wordsOf: (error) => (error as { message?: string } | undefined)?.message || undefined,
    },
    options,
  );
}
