import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect as connectTcp, createServer, type AddressInfo } from 'node:net';
import { jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { randomBase62 } from '../../src/crypto/base62.js';
import type { Cleanup } from './cleanup.js';
import { waitUntil } from './wait.js';

/** The machine's NATS server with JetStream (`.ci/run` starts it): no auth, on loopback. */
export const NATS_PORT = 4222;
export const NATS_URL = `nats://127.0.0.1:${NATS_PORT}`;

/** Set by CI (`.ci/run`): there, a broker that is not running is a failure, never a skip. */
const brokersRequired = process.env.HUBGATE_REQUIRE_BROKERS === '1';

/** Whether something accepts connections on `port` of loopback. */
export async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTcp({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Why NATS tests cannot run here, for `describe(name, { skip: await natsSkipReason() }, …)`; undefined
 * when they can. With HUBGATE_REQUIRE_BROKERS=1 a server that is down is not a reason to skip: the
 * tests run and fail at their first connect, loudly.
 */
export async function natsSkipReason(): Promise<string | undefined> {
  if (brokersRequired || (await listening(NATS_PORT))) return undefined;
  return 'NATS is not running on 127.0.0.1:4222: start it with `nats-server -a 127.0.0.1 -js`';
}

export interface StreamConsumer {
  stream: string;
  /** A subject of the stream's own, unique to the test: `<prefix>.` followed by anything. */
  prefix: string;
  /** Resolves with the first `count` messages the consumer got. */
  waitFor(count: number): Promise<JsMsg[]>;
  received: JsMsg[];
}

/**
 * A test's own JetStream stream (deleted with the test) taking `<prefix>.>`, and an ordered consumer
 * reading it from the start as a receiver would.
 */
export async function startStream(t: Cleanup): Promise<StreamConsumer> {
  const connection = await connect({ servers: `127.0.0.1:${NATS_PORT}` });
  const manager = await jetstreamManager(connection);
  const id = randomBase62(8);
  const stream = `hubgate-test-${id}`;
  const prefix = `hubgate.test.${id}`;
  await manager.streams.add({ name: stream, subjects: [`${prefix}.>`] });
  const consumer = await jetstream(connection).consumers.get(stream);
  const messages = await consumer.consume();
  // One hook, in this order: the stream is deleted while the connection that deletes it is open.
  t.after(async () => {
    await messages.close().catch(() => undefined);
    await manager.streams.delete(stream).catch(() => undefined);
    await connection.close().catch(() => undefined);
  });
  const received: JsMsg[] = [];
  void (async () => {
    for await (const message of messages) received.push(message);
  })();
  return {
    stream,
    prefix,
    received,
    waitFor: (count) =>
      waitUntil(() => received.length >= count && received.slice(0, count), {
        message: () => `${count} messages on stream ${stream}; it has ${received.length}`,
      }),
  };
}

/** A free port on loopback, for a server started next. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The machine's nats-server binary, for a server of a test's own; undefined when none is installed. */
export const NATS_SERVER = [
  '/usr/sbin/nats-server',
  '/usr/bin/nats-server',
  '/usr/local/bin/nats-server',
].find((path) => existsSync(path));

/**
 * A second NATS server of the test's own (stopped with it) that wants a user and password: the
 * machine's server has no auth. Undefined when no nats-server binary is installed.
 */
export async function startAuthNats(
  t: Cleanup,
  user: string,
  password: string,
): Promise<{ url: string } | undefined> {
  if (!NATS_SERVER) {
    if (brokersRequired) throw new Error('HUBGATE_REQUIRE_BROKERS=1, and no nats-server binary is installed');
    return undefined;
  }
  const port = await freePort();
  const server = spawn(
    NATS_SERVER,
    ['-a', '127.0.0.1', '-p', String(port), '--user', user, '--pass', password],
    { stdio: 'ignore' },
  );
  t.after(() => {
    server.kill('SIGTERM');
  });
  await waitUntil(() => listening(port), { message: () => `nats-server on port ${port}` });
  return { url: `nats://127.0.0.1:${port}` };
}
