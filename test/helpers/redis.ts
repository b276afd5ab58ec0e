import { connect as connectTcp } from 'node:net';
import { createClient } from 'redis';
import { randomBase62 } from '../../src/crypto/base62.js';
import type { Cleanup } from './cleanup.js';
import { waitUntil } from './wait.js';

/** The machine's Redis (`.ci/run` starts it): no password, loopback, database 0. Others' tests use it too. */
export const REDIS_URL = 'redis://127.0.0.1:6379/0';

/** Set by CI (`.ci/run`): there, a broker that is not running is a failure, never a skip. */
const brokersRequired = process.env.HUBGATE_REQUIRE_BROKERS === '1';

/** Whether something accepts connections on Redis's port. */
async function listening(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTcp({ host: '127.0.0.1', port: 6379 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Why Redis tests cannot run here, for `describe(name, { skip: await redisSkipReason() }, …)`;
 * undefined when they can. With HUBGATE_REQUIRE_BROKERS=1 a broker that is down is not a reason to
 * skip: the tests run and fail at their first connect, loudly.
 */
export async function redisSkipReason(): Promise<string | undefined> {
  if (brokersRequired || (await listening())) return undefined;
  return 'Redis is not running on 127.0.0.1:6379: start it with `redis-server --daemonize yes`';
}

const adminClient = () => createClient({ url: REDIS_URL, RESP: 2 });
type RedisAdmin = ReturnType<typeof adminClient>;

/**
 * A client of the machine's Redis as the default user; once `t` ends, `cleanUp` runs on it (deleting
 * what the test made) and then it is closed.
 */
export async function redisAdmin(
  t: Cleanup,
  cleanUp: (client: RedisAdmin) => Promise<unknown> = async () => {},
) {
  const client = adminClient();
  client.on('error', () => undefined);
  await client.connect();
  t.after(async () => {
    await cleanUp(client).catch(() => undefined);
    await client.close().catch(() => undefined);
  });
  return client;
}

/** An entry of a stream: its ID and its fields, in the order Redis keeps them. */
export interface StreamEntry {
  id: string;
  fields: Array<[string, string]>;
  field(name: string): string | undefined;
}

export interface StreamReader {
  /** The test's own stream, deleted with the test. */
  stream: string;
  /** Every entry of the stream now (XRANGE - +). */
  entries(): Promise<StreamEntry[]>;
  /** Resolves with the first `count` entries once the stream has them. */
  waitFor(count: number): Promise<StreamEntry[]>;
}

const entryOf = ([id, flat]: [string, string[]]): StreamEntry => {
  const fields: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) fields.push([flat[i]!, flat[i + 1]!]);
  return { id, fields, field: (name) => fields.find(([key]) => key === name)?.[1] };
};

/**
 * A stream name of the test's own (`hubgate-test-…`, never another test's key) and a reader of it as
 * a consumer would read it; the stream is deleted after the test. Nothing else of Redis is touched.
 */
export async function streamReader(t: Cleanup): Promise<StreamReader> {
  const stream = `hubgate-test-${randomBase62(10)}`;
  const admin = await redisAdmin(t, (client) => client.del(stream));
  const entries = async () =>
    ((await admin.sendCommand(['XRANGE', stream, '-', '+'])) as Array<[string, string[]]>).map(entryOf);
  return {
    stream,
    entries,
    waitFor: async (count) => {
      let seen = 0;
      return waitUntil(
        async () => {
          const all = await entries();
          seen = all.length;
          return all.length >= count && all.slice(0, count);
        },
        { message: () => `${count} entries on ${stream}; it has ${seen}` },
      );
    },
  };
}

/**
 * A Redis ACL user of the test's own, made with `rules` (e.g. `['on', '>pw', '~k', '+xadd']`) and
 * deleted after the test: the machine's Redis has no password, so a refused login needs a user.
 */
export async function redisUser(t: Cleanup, rules: string[]): Promise<string> {
  const username = `hubgate-test-${randomBase62(10)}`;
  const admin = await redisAdmin(t, (client) => client.sendCommand(['ACL', 'DELUSER', username]));
  await admin.sendCommand(['ACL', 'SETUSER', username, 'reset', ...rules]);
  return username;
}
