import mqtt, { type IClientOptions, type MqttClient, type Packet } from 'mqtt';
import type { RenderedPublish } from '../connections/connector.js';
import { randomBase62 } from '../crypto/base62.js';
import { classify } from '../outbound/sender.js';
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

// MQTT 5 brokers (contract §21, docs/decisions/0084): one client per hubgate connection and process
// (broker-sessions.ts), a clean session with a client ID of its own. A message is delivered once the
// broker acknowledges it with a success reason code: PUBACK at QoS 1, PUBCOMP at QoS 2. A failure
// reason code (0x87 not authorized…), a refused CONNECT, a broker that disconnects or goes away with the
// acknowledgement outstanding fail the attempt, and each says why in words.

/** One open client of a broker. */
interface MqttSession extends PublishSession {
  publish(message: RenderedPublish): Promise<string>;
}

/** MQTT 5's reason codes as the broker's words: `0x87 Not authorized`. */
const reasonWords = (code: number, name: string | undefined) =>
  `0x${code.toString(16).padStart(2, '0')}${name ? ` ${name}` : ''}`;

/** The name mqtt.js gives a reason code, read from its own error message (`Publish error: Not authorized`). */
const reasonName = (error: unknown) =>
  (error as { message?: string } | undefined)?.message?.replace(/^[^:]*:\s*/, '') || undefined;

/** The client's options: a clean MQTT 5 session of its own at the checked address, within `timeoutMs`. */
function clientOptions(publish: RenderedPublish, connectionId: string, address: string, timeoutMs: number) {
  const url = new URL(publish.broker.url);
  const tls = url.protocol === 'mqtts:';
  const host = hostOf(url);
  const { username, password } = publish.broker;
  const options: IClientOptions = {
    protocol: tls ? 'mqtts' : 'mqtt',
    host: address,
    hostname: address,
    port: url.port ? Number(url.port) : tls ? 8883 : 1883,
    // TLS checks the certificate against the name in the URL, not the address connected to.
    ...(tls && !parseIpLiteral(host) ? { servername: host } : {}),
    protocolVersion: 5,
    // A clean session, and a client ID no other process or connection uses: a broker drops the older
    // of two clients with one ID, and hubgate keeps nothing on the broker between sessions.
    clean: true,
    clientId: `hubgate_${connectionId}_${randomBase62(10)}`,
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password }),
    keepalive: 30,
    // hubgate's reconnect is the next attempt (docs/decisions/0080): mqtt.js must not reconnect, nor
    // hold publishes for a reconnect that does not come.
    reconnectPeriod: 0,
    // Connecting and the CONNACK together, within the attempt's budget left.
    connectTimeout: Math.max(1, Math.round(timeoutMs)),
  };
  return options;
}

/** Why a client closed before its CONNACK: the broker's refusal in words, a socket's error, or time. */
function connectFailure(lastError: unknown): Error {
  const code = (lastError as { code?: unknown } | undefined)?.code;
  if (typeof code === 'number') {
    // A CONNACK with a failure reason code: bad user name or password, not authorized, banned….
    const words = reasonWords(code, reasonName(lastError));
    const credentials = code === 0x86 || code === 0x87 || code === 0x04 || code === 0x05;
    return new BrokerFailure(
      'connection_error',
      credentials
        ? `the broker refused the credentials: CONNACK ${words}`
        : `the broker refused the connection: CONNACK ${words}`,
    );
  }
  if (lastError) return lastError as Error;
  return new BrokerFailure(
    'timeout',
    'the broker did not let hubgate connect and log in within DELIVERY_TIMEOUT_MS',
  );
}

/** Connects to the checked address and waits for the CONNACK; a refused one says so. */
async function connectClient(publish: RenderedPublish, opening: Opening) {
  const started = performance.now();
  const host = hostOf(new URL(publish.broker.url));
  const address = await checkedAddress(host, opening.policy, opening.resolve);
  const timeoutMs = opening.timeoutMs - (performance.now() - started);
  const client = mqtt.connect(clientOptions(publish, opening.connectionId, address, timeoutMs));
  await new Promise<void>((resolveConnect, reject) => {
    let lastError: unknown;
    const onError = (error: unknown) => (lastError = error);
    const onClose = () => {
      client.removeListener('error', onError);
      reject(connectFailure(lastError));
    };
    client.on('error', onError);
    client.once('close', onClose);
    client.once('connect', () => {
      client.removeListener('error', onError);
      client.removeListener('close', onClose);
      resolveConnect();
    });
  });
  return { client, address };
}

/** Ends a client with a DISCONNECT, or, when that takes too long (a broker gone away), drops its socket. */
const closeBounded = (client: MqttClient) =>
  closeWithin(
    () => new Promise<void>((resolve) => client.end(false, {}, () => resolve())),
    () => client.end(true),
  );

/** What a session knows of its client: open or not, the broker's last words, acks, publishes waiting. */
interface ClientState {
  open: boolean;
  lastWords: string | undefined;
  /** Acks by packet ID, read as they come (mqtt.js tells a publish's callback only that it succeeded). */
  acks: Map<number, { cmd: string; reasonCode: number }>;
  /**
   * Publishes waiting for their acknowledgement: failed when the connection ends (mqtt.js would keep
   * them for a reconnect that, with reconnectPeriod 0, never comes).
   */
  waiting: Set<(failure: BrokerFailure) => void>;
}

/** Follows the client: its acks, a DISCONNECT's reason, an error, and its end, which fails what waits. */
function watch(client: MqttClient): ClientState {
  const state: ClientState = { open: true, lastWords: undefined, acks: new Map(), waiting: new Set() };
  client.on('packetreceive', (packet: Packet) => {
    if (packet.cmd === 'puback' || packet.cmd === 'pubrec' || packet.cmd === 'pubcomp') {
      state.acks.set(packet.messageId ?? -1, { cmd: packet.cmd, reasonCode: packet.reasonCode ?? 0 });
    } else if (packet.cmd === 'disconnect') {
      const code = packet.reasonCode ?? 0;
      const name = packet.properties?.reasonString ?? DISCONNECT_NAMES[code];
      state.lastWords = `the broker disconnected: DISCONNECT ${reasonWords(code, name)}`;
    }
  });
  client.on('error', (error: unknown) => {
    const { detail } = classify(error);
    state.lastWords ??= detail === 'the connection failed' ? String(error) : detail;
  });
  client.on('close', () => {
    state.open = false;
    const failure = new BrokerFailure(
      'connection_error',
      state.lastWords ?? 'the connection to the broker closed before it acknowledged the message',
    );
    for (const fail of state.waiting) fail(failure);
    state.waiting.clear();
    // Nothing more goes over this client: the next attempt opens another.
    client.end(true);
  });
  return state;
}

/** Publishes a message at its QoS; resolves with the acknowledgement in words, or fails with the broker's. */
function publishOn(client: MqttClient, state: ClientState) {
  return (message: RenderedPublish) =>
    new Promise<string>((resolvePublish, reject) => {
      if (!state.open) {
        reject(
          new BrokerFailure('connection_error', state.lastWords ?? 'the connection to the broker closed'),
        );
        return;
      }
      const qos = message.target.qos === '2' ? 2 : 1;
      const fail = (failure: BrokerFailure) => reject(failure);
      state.waiting.add(fail);
      const properties = {
        contentType: message.headers['content-type'] ?? 'application/json',
        // Every header (content-type, webhook-id, webhook-timestamp, webhook-signature, traceparent)
        // as an MQTT 5 user property of the same name.
        userProperties: { ...message.headers },
      };
      const topic = message.target.topic ?? '';
      client.publish(topic, Buffer.from(message.body), { qos, properties }, (error, packet) => {
        state.waiting.delete(fail);
        const messageId = packet?.messageId ?? -1;
        const answer = state.acks.get(messageId);
        state.acks.delete(messageId);
        const code = (error as { code?: unknown } | undefined)?.code;
        if (error && typeof code === 'number') {
          const by = (answer?.cmd ?? (qos === 2 ? 'pubrec' : 'puback')).toUpperCase();
          const words = reasonWords(code, reasonName(error));
          reject(new BrokerFailure('connection_error', `the broker refused the message: ${by} ${words}`));
        } else if (error) reject(error);
        else {
          // 0x10: the broker took it and no subscriber matched; still a success reason code.
          const ack = qos === 2 ? 'PUBCOMP' : 'PUBACK';
          resolvePublish(
            answer?.reasonCode === 0x10 ? `${ack} success: no matching subscribers` : `${ack} success`,
          );
        }
      });
    });
}

async function openSession(publish: RenderedPublish, opening: Opening): Promise<MqttSession> {
  const { client, address } = await connectClient(publish, opening);
  const state = watch(client);
  return {
    remoteAddress: address,
    isOpen: () => state.open && client.connected,
    close: () => {
      state.open = false;
      return closeBounded(client);
    },
    publish: publishOn(client, state),
  };
}

/** DISCONNECT's reason codes a broker sends (MQTT 5 §3.14.2.1), by name. */
const DISCONNECT_NAMES: Record<number, string> = {
  0x80: 'Unspecified error',
  0x81: 'Malformed Packet',
  0x82: 'Protocol Error',
  0x83: 'Implementation specific error',
  0x87: 'Not authorized',
  0x89: 'Server busy',
  0x8b: 'Server shutting down',
  0x8d: 'Keep Alive timeout',
  0x8e: 'Session taken over',
  0x90: 'Topic Name invalid',
  0x93: 'Receive Maximum exceeded',
  0x95: 'Packet too large',
  0x97: 'Quota exceeded',
  0x98: 'Administrative action',
  0x99: 'Payload format invalid',
  0x9b: 'QoS not supported',
};

const PLAINTEXT_REFUSED = 'mqtt: (no TLS) is refused unless DELIVERY_ALLOW_HTTP=true; use mqtts:';

/** The `mqtt` connector's destination: publishes at QoS 1 or 2 over kept clients. */
export function mqttDestination(options: BrokerDestinationOptions): Destination {
  return brokerDestination(
    {
      name: 'MQTT',
      tlsProtocol: 'mqtts:',
      plaintextRefused: PLAINTEXT_REFUSED,
      openSession,
      noAnswer: 'no acknowledgement from the broker',
      wordsOf: (error) => (error as { message?: string } | undefined)?.message,
    },
    options,
  );
}
