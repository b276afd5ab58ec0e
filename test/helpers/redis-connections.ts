import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Cleanup } from './cleanup.js';
import type { Harness, TestSession } from './harness.js';
import { REDIS_URL, redisAdmin, redisUser, streamReader, type StreamReader } from './redis.js';

/** A redis connection of a test, to a stream of its own, logged in as an ACL user of its own. */
export interface OwnRedisConnection {
  id: string;
  /** The ACL user it logs in as: CLIENT LIST shows its sessions as `user=<username>`. */
  username: string;
  reader: StreamReader;
}

/**
 * A bound redis connection to a stream of the test's own, logged in as an ACL user that may only XADD
 * there: the machine's Redis is shared, and its CLIENT LIST tells this connection's sessions apart by
 * that user. Stream and user are deleted after the test.
 */
export async function redisConnectionOfItsOwn(
  h: Harness,
  t: Cleanup,
  session: TestSession,
): Promise<OwnRedisConnection> {
  const reader = await streamReader(t);
  const password = `pw-${randomBytes(6).toString('hex')}`;
  const username = await redisUser(t, ['on', `>${password}`, `~${reader.stream}`, '+xadd']);
  const created = await h.request<{ id: string }>('POST', '/api/v1/integrations/connections', {
    session,
    body: { connectorKey: 'redis', displayName: username, url: REDIS_URL, stream: reader.stream },
  });
  assert.equal(created.status, 201, `creating a redis connection: ${created.text}`);
  const bound = await h.request('PUT', `/api/v1/integrations/connections/${created.body.id}/credentials`, {
    session,
    body: { username, password },
  });
  assert.equal(bound.status, 200, `binding the redis credentials: ${bound.text}`);
  return { id: created.body.id, username, reader };
}

/** Counts the sessions Redis has open now for any of `usernames` (CLIENT LIST), by anyone. */
export async function redisSessionCounter(t: Cleanup) {
  const admin = await redisAdmin(t);
  return async (...usernames: string[]): Promise<number> => {
    const wanted = new Set(usernames.map((username) => `user=${username}`));
    return String(await admin.sendCommand(['CLIENT', 'LIST']))
      .split('\n')
      .filter((line) => line.split(' ').some((field) => wanted.has(field))).length;
  };
}
