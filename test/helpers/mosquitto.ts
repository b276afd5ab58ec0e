import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as connectTcp, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type IPublishPacket } from 'mqtt';
import { randomBase62 } from '../../src/crypto/base62.js';
import type { Cleanup } from './cleanup.js';
import { waitUntil } from './wait.js';

/** The machine's Mosquitto (`.ci/run` starts it): anonymous on loopback, MQTT 5. */
export const MOSQUITTO_URL = 'mqtt://127.0.0.1:1883';

/** Set by CI (`.ci/run`): there, a broker that is not running is a failure, never a skip. */
const brokersRequired = process.env.HUBGATE_REQUIRE_BROKERS === '1';

/** Whether something accepts connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
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
 * Why Mosquitto tests cannot run here, for `describe(name, { skip: await mosquittoSkipReason() }, …)`;
 * undefined when they can. With HUBGATE_REQUIRE_BROKERS=1 a broker that is down is not a reason to
 * skip: the tests run and fail at their first connect, loudly.
 */
export async function mosquittoSkipReason(): Promise<string | undefined> {
  if (brokersRequired || (await listening(1883))) return undefined;
  return 'Mosquitto is not running on 127.0.0.1:1883: start it with `mosquitto -d`';
}

/** A message as a subscriber got it. */
export interface Received {
  topic: string;
  body: string;
  qos: number;
  contentType: string | undefined;
  userProperties: Record<string, string>;
}

export interface Subscriber {
  /** A topic of the test's own, `hubgate-test/<random>`: subscribed to with `/#` under it. */
  prefix: string;
  received: Received[];
  /** Resolves with the first `count` messages. */
  waitFor(count: number): Promise<Received[]>;
}

/** Where a subscriber connects (the machine's Mosquitto unless given), as whom, and under which topic. */
export interface SubscriberOptions {
  url?: string;
  username?: string;
  password?: string;
  prefix?: string;
}

/** An MQTT 5 client of the test's own, subscribed to `<prefix>/#` at QoS 2 as a consumer would be. */
export async function startSubscriber(t: Cleanup, options: SubscriberOptions = {}): Promise<Subscriber> {
  const { url = MOSQUITTO_URL, username, password } = options;
  const prefix = options.prefix ?? `hubgate-test/${randomBase62(10)}`;
  const client = await mqtt.connectAsync(url, {
    ...(username === undefined ? {} : { username, password }),
    protocolVersion: 5,
    clean: true,
    clientId: `hubgate-test-sub-${randomBase62(10)}`,
    reconnectPeriod: 0,
  });
  t.after(() => client.endAsync(true).catch(() => undefined));
  const received: Received[] = [];
  client.on('message', (topic: string, payload: Buffer, packet: IPublishPacket) => {
    const properties = packet.properties ?? {};
    const userProperties: Record<string, string> = {};
    for (const [name, value] of Object.entries(properties.userProperties ?? {})) {
      userProperties[name] = Array.isArray(value) ? value.join(',') : value;
    }
    received.push({
      topic,
      body: payload.toString('utf8'),
      qos: packet.qos,
      contentType: properties.contentType,
      userProperties,
    });
  });
  await client.subscribeAsync(`${prefix}/#`, { qos: 2 });
  return {
    prefix,
    received,
    waitFor: (count) =>
      waitUntil(() => received.length >= count && received.slice(0, count), {
        message: () => `${count} messages under ${prefix}; it has ${received.length}`,
      }),
  };
}

/** A port on 127.0.0.1 nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface SecuredBroker {
  url: string;
  username: string;
  password: string;
  /** A topic prefix the user may publish under (`allowed/…`); anything else is refused. */
  allowedPrefix: string;
}

/**
 * A second Mosquitto of the test's own on a free loopback port, with no anonymous access: one user
 * (a password file made by mosquitto_passwd) who may publish under `allowed/` only (an ACL). The
 * machine's Mosquitto takes any login, so refusals need this one; it stops with the test.
 */
export async function startSecuredMosquitto(t: Cleanup): Promise<SecuredBroker> {
  const dir = mkdtempSync(join(tmpdir(), 'hubgate-mosquitto-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // Started as root, Mosquitto reads its password and ACL files as the user `mosquitto`.
  chmodSync(dir, 0o755);
  const username = 'hubgate';
  const password = `pw-${randomBase62(16)}`;
  const passwords = join(dir, 'passwords');
  const made = spawnSync('mosquitto_passwd', ['-b', '-c', passwords, username, password]);
  if (made.status !== 0) throw new Error(`mosquitto_passwd failed: ${made.stderr.toString()}`);
  writeFileSync(join(dir, 'acl'), `user ${username}\ntopic readwrite allowed/#\n`);
  const port = await freePort();
  writeFileSync(
    join(dir, 'mosquitto.conf'),
    [
      `listener ${port} 127.0.0.1`,
      'allow_anonymous false',
      `password_file ${passwords}`,
      `acl_file ${join(dir, 'acl')}`,
      'persistence false',
      '',
    ].join('\n'),
  );
  const broker = spawn('mosquitto', ['-c', join(dir, 'mosquitto.conf')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  broker.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  broker.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => broker.once('exit', () => resolve()));
  t.after(async () => {
    broker.kill('SIGTERM');
    await exited;
  });
  await waitUntil(() => listening(port), {
    message: () => `the test's Mosquitto to listen on ${port}; it said: ${output}`,
  });
  return { url: `mqtt://127.0.0.1:${port}`, username, password, allowedPrefix: `allowed/${randomBase62(8)}` };
}
