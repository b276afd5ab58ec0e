import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createKeyring } from '../../src/crypto/keyring.js';
import { createPlatformKey } from '../../src/keys/platform-keys.js';
import { startServe, type RunningServer } from '../helpers/cli.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';
import { githubSignature } from './signers.js';

// Contract §22: de-duplication by the provider's delivery ID holds across processes. Two `hubgate
// serve` processes on one PostgreSQL database get the same signed delivery at the same moment, round
// after round: each delivery ID becomes exactly one event, and the other answer is the duplicate
// naming it.

const ROUNDS = 20;
const skip = ENGINE !== 'postgres' && 'two processes share a database on PostgreSQL only';

describe('one delivery sent to two processes at once', { skip }, () => {
  let db: TestDatabase;
  let a: RunningServer;
  let b: RunningServer;
  let plt: string;
  const secretKey = randomBytes(32);

  before(async () => {
    db = await createTestDatabase();
    if (db.target.kind !== 'postgres') throw new Error('unreachable');
    plt = (
      await createPlatformKey(
        db.database.kysely,
        createKeyring(secretKey),
        { name: 'ops', expiresAt: null },
        new Date(),
      )
    ).secret;
    const env = { DATABASE_URL: db.target.url, HUBGATE_SECRET_KEY: secretKey.toString('base64') };
    [a, b] = await Promise.all([startServe(env), startServe(env)]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await db?.drop();
  });

  async function call(
    server: RunningServer,
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: string,
  ) {
    const response = await fetch(`${server.baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      text,
      body: text ? JSON.parse(text) : undefined,
    };
  }
  const json = (value: unknown) => JSON.stringify(value);
  const jsonHeaders = { 'content-type': 'application/json' };

  async function sessionOfNewTenant(): Promise<Record<string, string>> {
    const auth = { ...jsonHeaders, authorization: `Bearer ${plt}` };
    const tenant = await call(
      a,
      'POST',
      '/api/v1/platform/tenants',
      auth,
      json({ name: 'Acme', entitlements: ['integrations'] }),
    );
    assert.equal(tenant.status, 201, tenant.text);
    const credentials = { email: `it-${randomUUID()}@acme.example`, password: 'a long passphrase' };
    const user = await call(
      a,
      'POST',
      `/api/v1/platform/tenants/${tenant.body.id}/users`,
      auth,
      json({ ...credentials, role: 'COMPANY_IT_ADMIN' }),
    );
    assert.equal(user.status, 201, user.text);
    const login = await call(a, 'POST', '/api/v1/auth/login', jsonHeaders, json(credentials));
    assert.equal(login.status, 200, login.text);
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    return { ...jsonHeaders, cookie, 'x-csrf-token': login.body.csrfToken as string };
  }

  test(`${ROUNDS} deliveries, each sent to both at once: one event each, the other answer its duplicate`, async () => {
    const session = await sessionOfNewTenant();
    const secret = `gh-${randomUUID()}`;
    const created = await call(
      a,
      'POST',
      '/api/v1/integrations/sources',
      session,
      json({ name: 'race', scheme: 'github', secret, maxPerSecond: 1000 }),
    );
    assert.equal(created.status, 201, created.text);
    const source = created.body.id as string;
    const events = new Set<string>();
    for (let round = 0; round < ROUNDS; round++) {
      const body = json({ ref: 'refs/heads/main', round });
      const headers = {
        ...jsonHeaders,
        'x-github-event': 'push',
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': githubSignature(secret, body),
      };
      const answers = await Promise.all(
        [a, b].map((server) => call(server, 'POST', `/ingest/${source}`, headers, body)),
      );
      const statuses = answers.map((r) => r.status).sort();
      assert.deepEqual(
        statuses,
        [200, 202],
        `round ${round}: ${answers.map((r) => `${r.status} ${r.text}`).join(' | ')}`,
      );
      const published = answers.find((r) => r.status === 202);
      const duplicate = answers.find((r) => r.status === 200);
      assert.deepEqual(
        duplicate?.body,
        { id: published?.body.id, duplicate: true },
        `round ${round}: the duplicate does not name the one event`,
      );
      events.add(published?.body.id);
    }
    assert.equal(events.size, ROUNDS, 'two rounds became the same event');
    const stored = await db.database.kysely
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('type', '=', 'github.push')
      .executeTakeFirstOrThrow();
    assert.equal(Number(stored.n), ROUNDS, `${stored.n} events stored for ${ROUNDS} deliveries`);
  });
});
