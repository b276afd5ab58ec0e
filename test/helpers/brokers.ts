import assert from 'node:assert/strict';
import type { JsMsg } from '@nats-io/jetstream';
import type { ConsumeMessage } from 'amqplib';
import type { Cleanup } from './cleanup.js';
import type { Delivery } from './events.js';
import { MOSQUITTO_URL, mosquittoSkipReason, startSecuredMosquitto, startSubscriber } from './mosquitto.js';
import { NATS_PORT, NATS_URL, natsSkipReason, startAuthNats, startStream } from './nats.js';
import { RABBITMQ_URL, rabbitSkipReason, startConsumer } from './rabbitmq.js';
import { REDIS_URL, redisAdmin, redisSkipReason, redisUser, streamReader } from './redis.js';

// The four brokers of contract §21 as the shared suites (broker-suite.ts) and brokers-crash.test.ts see
// them: one table of what differs (how a consumer is made, the connector's config, the broker's answer
// in words), so that what is common is written once.

/** The event type the suites publish; a `{type}` in a route is replaced by it. */
export const EVENT_TYPE = 'order.paid';

/** A message as a consumer of the broker got it, whatever the broker's own shape. */
export interface BrokerMessage<M> {
  /** The body: the JSON a webhook receiver gets. */
  body: string;
  /** A Standard Webhooks value or the content type, where the broker carries it (header, field, property). */
  header(name: string): string | undefined;
  /** The routing key, subject or topic it came with; undefined where a broker has none (a Redis stream). */
  route: string | undefined;
  /** The message as the broker's client library gave it, for what only that broker has. */
  native: M;
}

/** A place of the test's own on the machine's broker, and a consumer reading it. */
export interface Target<M> {
  /** The connection's fields (all but `url`) that publish here. */
  config: Record<string, unknown>;
  /** The attempt's `request.url` for an event of `EVENT_TYPE` published here (§21, inspection). */
  attemptUrl: string;
  /** The route a message of `EVENT_TYPE` comes with (undefined where the broker has none). */
  routed: string | undefined;
  /** What the broker answered for `message`, in the words an attempt's `response.body` shows. */
  answerTo(message: BrokerMessage<M>): string;
  /** What it answers to a retry of `message` it already stored; undefined where it stores it again. */
  answerToRetryOf?(message: BrokerMessage<M>): string;
  /** Every message the consumer got so far. */
  messages(): Promise<Array<BrokerMessage<M>>>;
  /** Resolves with the first `count` messages once the consumer has them. */
  waitFor(count: number): Promise<Array<BrokerMessage<M>>>;
}

/** What a connection to the machine's broker is bound with. */
export interface Login {
  credentials: Record<string, string>;
  /** What must never be in a log or an answer. */
  secrets: string[];
  /** How many sessions the broker shows for this login now, where it can tell. */
  sessions?(): Promise<number>;
}

/** A broker of the test's own that takes one login only (the machine's brokers take any or none). */
export interface SecuredBroker {
  /** The connection's fields (with `url`) that publish where this login may. */
  config: Record<string, unknown>;
  right: Record<string, string>;
  /** A login with the wrong password (`password`). */
  wrong: Record<string, string>;
  /** What of `right` must never be in a log or an answer. */
  secrets: string[];
  /** What the consumer got there, where the test can read it. */
  messages?(): Promise<unknown[]>;
  /** The error words of the next attempt once the right login is bound; undefined: it is delivered. */
  afterLogin?: RegExp;
}

export interface BrokerCase<M = unknown> {
  connectorKey: string;
  /** The describe block's name, e.g. `amqp connector (RabbitMQ)`. */
  title: string;
  displayName: string;
  /** The machine's broker's port on 127.0.0.1. */
  port: number;
  /** The machine's broker, without TLS. */
  url: string;
  /** A URL of the broker's scheme at `host` (`127.0.0.1:port`, e.g. a proxy in front of it). */
  urlAt(host: string): string;
  /** A URL with TLS: what a hub that allows no plaintext takes at create. */
  tlsUrl: string;
  /** An address §8 refuses and a URL with it, and the same URL with an address that passes at create. */
  refusedAddress: { url: string; allowedUrl: string; address: string };
  skipReason(): Promise<string | undefined>;
  /** A target of the test's own whose route (routing key, subject, topic) is `route`, `{type}` allowed. */
  startTarget(t: Cleanup, route: string): Promise<Target<M>>;
  /** The login for the machine's broker. */
  login(t: Cleanup): Promise<Login>;
  /** Undefined when such a broker cannot be started here (the test is skipped). */
  secured(t: Cleanup): Promise<SecuredBroker | undefined>;
  words: {
    /** A refused login, in every attempt. */
    refusedCredentials: RegExp;
    /** No acknowledgement within DELIVERY_TIMEOUT_MS. */
    timeout: RegExp;
    /** The connection closed under a publish waiting for its acknowledgement; undefined: not tested. */
    closedInFlight?: string;
  };
  /** Connection bodies (all but connectorKey and displayName) refused with 400 validation_failed. */
  invalid: Array<Record<string, unknown>>;
  /** What `invalid` holds that a refusal must not quote. */
  invalidSecret: string;
  /** Credentials refused at binding with 400 validation_failed. */
  invalidCredentials: Array<Record<string, string>>;
  /** What only this broker shows of a delivered message and its attempt. */
  checkDelivered?(message: BrokerMessage<M>, attempt: Delivery['attempts'][number], eventId: string): void;
}

/** An ordinary login nothing refuses, with nothing secret in it. */
const anonymous = async (): Promise<Login> => ({ credentials: {}, secrets: [] });

const expand = (route: string) => route.replaceAll('{type}', EVENT_TYPE);

const amqp: BrokerCase<ConsumeMessage> = {
  connectorKey: 'amqp',
  title: 'amqp connector (RabbitMQ)',
  displayName: 'rabbit',
  port: 5672,
  url: RABBITMQ_URL,
  urlAt: (host) => `amqp://${host}/`,
  tlsUrl: 'amqps://127.0.0.1:5671/',
  refusedAddress: {
    url: 'amqps://10.0.0.1:5671/',
    allowedUrl: 'amqps://127.0.0.1:5671/',
    address: '10.0.0.1',
  },
  skipReason: rabbitSkipReason,
  async startTarget(t, route) {
    // A direct exchange: the queue is bound with the route the suite's events make of it.
    const consumer = await startConsumer(t, expand(route));
    const message = (native: ConsumeMessage): BrokerMessage<ConsumeMessage> => ({
      body: native.content.toString('utf8'),
      header: (name) => {
        const value =
          name === 'content-type' ? native.properties.contentType : native.properties.headers?.[name];
        return value === undefined ? undefined : String(value);
      },
      route: native.fields.routingKey,
      native,
    });
    return {
      config: { exchange: consumer.exchange, routingKey: route },
      attemptUrl: `${RABBITMQ_URL} exchange=${consumer.exchange} routingKey=${expand(route)}`,
      routed: expand(route),
      answerTo: () => 'confirmed',
      messages: async () => consumer.received.map(message),
      waitFor: async (count) => (await consumer.waitFor(count)).map(message),
    };
  },
  login: async () => ({
    credentials: { username: 'guest', password: 'guest' },
    secrets: ['guest:guest'],
  }),
  async secured(t) {
    const consumer = await startConsumer(t, 'k');
    return {
      config: { url: RABBITMQ_URL, exchange: consumer.exchange, routingKey: 'k' },
      right: { username: 'guest', password: 'guest' },
      wrong: { username: 'guest', password: `wrong-${Date.now()}-pw` },
      secrets: [],
      messages: async () => consumer.received,
    };
  },
  words: {
    refusedCredentials: /the broker refused the credentials/,
    timeout: /no confirm from the broker/,
  },
  invalid: [
    { url: 'amqp://guest:guest@127.0.0.1:5672/', routingKey: 'k' },
    { url: 'amqp://guest@127.0.0.1/', routingKey: 'k' },
    { url: 'http://127.0.0.1/', routingKey: 'k' },
  ],
  invalidSecret: 'guest:guest',
  invalidCredentials: [],
  checkDelivered({ native }, _attempt, eventId) {
    const { contentType, messageId, type, deliveryMode } = native.properties;
    assert.equal(contentType, 'application/json', 'the message is not marked as JSON');
    assert.equal(messageId, eventId, 'the message ID is not the event ID');
    assert.equal(type, EVENT_TYPE, "the message's type is not the event type");
    assert.equal(deliveryMode, 2, 'the message is not persistent');
  },
};

const nats: BrokerCase<JsMsg> = {
  connectorKey: 'nats',
  title: 'nats connector (JetStream)',
  displayName: 'nats',
  port: NATS_PORT,
  url: NATS_URL,
  urlAt: (host) => `nats://${host}`,
  tlsUrl: `tls://127.0.0.1:${NATS_PORT}`,
  refusedAddress: {
    url: `tls://127.0.0.2:${NATS_PORT}`,
    allowedUrl: `tls://127.0.0.1:${NATS_PORT}`,
    address: '127.0.0.2',
  },
  skipReason: natsSkipReason,
  async startTarget(t, route) {
    const consumer = await startStream(t);
    const message = (native: JsMsg): BrokerMessage<JsMsg> => ({
      body: native.string(),
      header: (name) => native.headers?.get(name),
      route: native.subject,
      native,
    });
    const answerTo = (m: BrokerMessage<JsMsg>) => `stream ${consumer.stream} seq ${m.native.seq}`;
    return {
      config: { subject: `${consumer.prefix}.${route}` },
      attemptUrl: `${NATS_URL} subject=${consumer.prefix}.${expand(route)}`,
      routed: `${consumer.prefix}.${expand(route)}`,
      answerTo,
      // Nats-Msg-Id is the event ID: JetStream keeps one of a retry it already has.
      answerToRetryOf: (m) => `${answerTo(m)} (duplicate)`,
      messages: async () => consumer.received.map(message),
      waitFor: async (count) => (await consumer.waitFor(count)).map(message),
    };
  },
  login: anonymous,
  async secured(t) {
    const password = `right-${Date.now()}-pw`;
    const server = await startAuthNats(t, 'hubgate', password);
    if (!server) return undefined;
    return {
      config: { url: server.url, subject: 'orders' },
      right: { username: 'hubgate', password },
      wrong: { username: 'hubgate', password: `wrong-${Date.now()}-pw` },
      secrets: [password],
      // That server has no JetStream: a login it took fails at the publish, not at the login.
      afterLogin: /no JetStream stream takes the subject orders/,
    };
  },
  words: {
    refusedCredentials: /the broker refused the credentials: .*authorization violation/i,
    timeout: /no PubAck from JetStream/,
    closedInFlight: 'the connection to the broker closed before its PubAck',
  },
  invalid: [
    { url: 'nats://hubgate:s3cret-pw@127.0.0.1:4222', subject: 'orders' },
    { url: 'nats://s3cret-token@127.0.0.1:4222', subject: 'orders' },
    { url: 'http://127.0.0.1:4222', subject: 'orders' },
    { url: NATS_URL, subject: 'orders.*' },
    { url: NATS_URL, subject: 'orders.>' },
    { url: NATS_URL, subject: 'orders..paid' },
    { url: NATS_URL, subject: 'x'.repeat(256) },
  ],
  invalidSecret: 's3cret',
  invalidCredentials: [{ username: 'hubgate', token: `token-${Date.now()}-secret` }],
  checkDelivered(message, attempt, eventId) {
    assert.equal(message.header('Nats-Msg-Id'), eventId, 'the Nats-Msg-Id is not the event ID');
    const request = attempt.request as { headers: Record<string, string> } | null;
    assert.equal(request?.headers['Nats-Msg-Id'], eventId, 'the attempt does not show the Nats-Msg-Id');
  },
};

const redis: BrokerCase<{ id: string; fields: Array<[string, string]> }> = {
  connectorKey: 'redis',
  title: 'redis connector (Redis Streams)',
  displayName: 'stream',
  port: 6379,
  url: REDIS_URL,
  urlAt: (host) => `redis://${host}/0`,
  tlsUrl: 'rediss://127.0.0.1:6379/0',
  refusedAddress: {
    url: 'rediss://10.0.0.1:6379/0',
    allowedUrl: 'rediss://127.0.0.1:6379/0',
    address: '10.0.0.1',
  },
  skipReason: redisSkipReason,
  // A stream has no route: every entry of the connection goes to the one stream.
  async startTarget(t) {
    const reader = await streamReader(t);
    const message = (entry: {
      id: string;
      fields: Array<[string, string]>;
      field(name: string): string | undefined;
    }) => ({
      body: String(entry.field('body')),
      header: (name: string) => entry.field(name),
      route: undefined,
      native: { id: entry.id, fields: entry.fields },
    });
    return {
      config: { stream: reader.stream },
      attemptUrl: `redis://127.0.0.1:6379/0 stream=${reader.stream}`,
      routed: undefined,
      answerTo: (m) => m.native.id,
      messages: async () => (await reader.entries()).map(message),
      waitFor: async (count) => (await reader.waitFor(count)).map(message),
    };
  },
  // An ACL user of the test's own, on the test's streams only: the machine's Redis has no password,
  // and CLIENT LIST tells this user's sessions from everyone else's.
  async login(t) {
    const password = `pw-${Date.now()}-secret`;
    const username = await redisUser(t, ['on', `>${password}`, '~hubgate-test-*', '+xadd']);
    const admin = await redisAdmin(t);
    return {
      credentials: { username, password },
      secrets: [password],
      sessions: async () =>
        String(await admin.sendCommand(['CLIENT', 'LIST']))
          .split('\n')
          .filter((line) => line.includes(` user=${username} `)).length,
    };
  },
  async secured(t) {
    const reader = await streamReader(t);
    const username = await redisUser(t, ['on', '>the-right-one', `~${reader.stream}`, '+xadd']);
    return {
      config: { url: REDIS_URL, stream: reader.stream },
      right: { username, password: 'the-right-one' },
      wrong: { username, password: `wrong-${Date.now()}-pw` },
      secrets: [],
      messages: () => reader.entries(),
    };
  },
  words: {
    refusedCredentials: /^the broker refused the credentials: WRONGPASS/,
    timeout: /no answer from the broker within DELIVERY_TIMEOUT_MS/,
  },
  invalid: [
    { url: 'redis://default:hunter2@127.0.0.1:6379/0', stream: 's' },
    { url: 'redis://:hunter2@127.0.0.1:6379', stream: 's' },
    { url: 'rediss://someone@127.0.0.1/', stream: 's' },
    { url: 'redis://127.0.0.1:6379/zero', stream: 's' },
    { url: 'http://127.0.0.1/', stream: 's' },
    { url: REDIS_URL, stream: '' },
    { url: REDIS_URL, stream: 'x'.repeat(201) },
  ],
  invalidSecret: 'hunter2',
  invalidCredentials: [{ username: 'someone' }],
  checkDelivered({ native }, _attempt) {
    assert.deepEqual(
      native.fields.slice(0, 5).map(([name]) => name),
      ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-type', 'body'],
      'the entry does not carry the fields §21 names, in that order',
    );
    assert.match(native.id, /^\d+-\d+$/, 'the answer is not an entry ID');
  },
};

const mqtt: BrokerCase<{ qos: number; contentType: string | undefined }> = {
  connectorKey: 'mqtt',
  title: 'mqtt connector (MQTT 5, Mosquitto)',
  displayName: 'mosquitto',
  port: 1883,
  url: MOSQUITTO_URL,
  urlAt: (host) => `mqtt://${host}`,
  tlsUrl: 'mqtts://127.0.0.1:8883',
  refusedAddress: { url: 'mqtts://10.0.0.1:8883', allowedUrl: 'mqtts://127.0.0.1:8883', address: '10.0.0.1' },
  skipReason: mosquittoSkipReason,
  async startTarget(t, route) {
    const subscriber = await startSubscriber(t);
    const message = (m: (typeof subscriber.received)[number]) => ({
      body: m.body,
      header: (name: string) => m.userProperties[name],
      route: m.topic,
      native: { qos: m.qos, contentType: m.contentType },
    });
    return {
      config: { topic: `${subscriber.prefix}/${route}` },
      attemptUrl: `${MOSQUITTO_URL} topic=${subscriber.prefix}/${expand(route)} qos=1`,
      routed: `${subscriber.prefix}/${expand(route)}`,
      answerTo: () => 'PUBACK success',
      messages: async () => subscriber.received.map(message),
      waitFor: async (count) => (await subscriber.waitFor(count)).map(message),
    };
  },
  login: anonymous,
  async secured(t) {
    const broker = await startSecuredMosquitto(t);
    const subscriber = await startSubscriber(t, { ...broker, prefix: broker.allowedPrefix });
    return {
      config: { url: broker.url, topic: `${broker.allowedPrefix}/{type}` },
      right: { username: broker.username, password: broker.password },
      wrong: { username: broker.username, password: `wrong-${Date.now()}-pw` },
      secrets: [broker.password],
      messages: async () => subscriber.received,
    };
  },
  words: {
    refusedCredentials: /^the broker refused the credentials: CONNACK 0x8[67] /,
    timeout: /^no acknowledgement from the broker within DELIVERY_TIMEOUT_MS$/,
    closedInFlight: 'the connection to the broker closed before it acknowledged the message',
  },
  invalid: [
    { url: 'mqtt://user:secret-pw@127.0.0.1:1883', topic: 't' },
    { url: 'mqtt://user@127.0.0.1', topic: 't' },
    { url: 'http://127.0.0.1/', topic: 't' },
    { url: 'mqtt://127.0.0.1:1883/path', topic: 't' },
    { url: MOSQUITTO_URL, topic: 'orders/+/paid' },
    { url: MOSQUITTO_URL, topic: 'orders/#' },
    { url: MOSQUITTO_URL, topic: '' },
    { url: MOSQUITTO_URL, topic: 'x'.repeat(201) },
    { url: MOSQUITTO_URL, topic: 't', qos: 0 },
  ],
  invalidSecret: 'secret-pw',
  invalidCredentials: [],
  checkDelivered({ native }) {
    assert.equal(native.qos, 1, 'the message was not published at QoS 1');
    assert.equal(native.contentType, 'application/json', 'the message is not marked as JSON');
  },
};

/** The table: every broker of §21, by connector key. */
export const BROKERS = { amqp, nats, redis, mqtt } as const;
