import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createKeyring } from '../../src/crypto/keyring.js';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { ENGINE } from '../helpers/test-database.js';

// docs/api/oauth.md: providers are connectors made at run time, and every process keeps the catalog in memory.
// Two apps on one PostgreSQL database play two processes: a provider one of them creates, changes or
// deletes is what the other lists, connects to and edits by, and a delete racing a connection's create in
// the other never leaves a connection of a provider that is gone. No provider is called: these are
// authorization-code providers, which nothing contacts before someone authorizes.

const PROVIDERS = '/api/v1/platform/oauth-providers';
const CONNECTIONS = '/api/v1/integrations/connections';
const CONNECTORS = '/api/v1/integration-hub/connectors';
const ROUNDS = 12;

let a: Harness;
let b: Harness;
let session: TestSession;
const skip = ENGINE !== 'postgres' && 'two processes share a database on PostgreSQL only';

before(async () => {
  if (skip) return;
  const keyring = createKeyring(randomBytes(32));
  a = await startHarness({ keyring });
  b = await startHarness({ keyring, testDatabase: a.testDatabase });
  ({ session } = await makeSignedInTenant(a));
});
after(async () => {
  await b?.close();
  await a?.close();
});

let n = 0;
async function createProvider(on: Harness): Promise<string> {
  const key = `two${++n}-${Date.now().toString(36)}`;
  const r = await on.request('POST', PROVIDERS, {
    token: on.platformToken,
    body: {
      key,
      name: `Provider ${key}`,
      authorizationUrl: 'https://auth.example.com/authorize',
      tokenUrl: 'https://auth.example.com/token',
      apiBaseUrl: 'https://api.example.com/v1',
      clientId: 'hubgate-client',
      clientSecret: 'two-processes-secret',
      scopes: ['read'],
    },
  });
  assert.equal(r.status, 201, `creating provider ${key} answered ${r.status}: ${r.text}`);
  return key;
}

const connect = (on: Harness, key: string) =>
  on.request<{ id: string }>('POST', CONNECTIONS, {
    session,
    body: { connectorKey: `oauth2:${key}`, displayName: `Uses ${key}` },
  });

async function connectorKeys(on: Harness): Promise<string[]> {
  const r = await on.request<{ data: Array<{ connectorKey: string }> }>('GET', CONNECTORS, { session });
  assert.equal(r.status, 200, r.text);
  return r.body.data.map((c) => c.connectorKey);
}

describe('OAuth2 providers across two processes', { skip }, () => {
  test('a provider made in one process is listed, connected to and edited in the other at once', async () => {
    await connectorKeys(b); // B has read the catalog before the provider exists
    const key = await createProvider(a);
    assert.ok((await connectorKeys(b)).includes(`oauth2:${key}`), 'the other process lists the new provider');

    const made = await connect(a, key);
    assert.equal(made.status, 201, made.text);
    const renamed = await b.request('PATCH', `${CONNECTIONS}/${made.body.id}`, {
      session,
      body: { displayName: 'Renamed in the other process' },
    });
    assert.equal(renamed.status, 200, `the other process edits the connection: ${renamed.text}`);

    const key2 = await createProvider(a);
    const there = await connect(b, key2);
    assert.equal(
      there.status,
      201,
      `the other process connects to a provider it never listed: ${there.text}`,
    );
  });

  test('a provider deleted in one process is gone in the other: listing and connecting', async () => {
    const key = await createProvider(a);
    assert.ok((await connectorKeys(b)).includes(`oauth2:${key}`), 'the other process lists it first');
    const deleted = await a.request('DELETE', `${PROVIDERS}/${key}`, { token: a.platformToken });
    assert.equal(deleted.status, 204, deleted.text);
    assert.ok(!(await connectorKeys(b)).includes(`oauth2:${key}`), 'the other process no longer lists it');
    const refused = await connect(b, key);
    assert.equal(refused.status, 400, `connecting to a deleted provider: ${refused.text}`);
  });

  test(`a delete racing a connection's create in the other process: one of them wins, ${ROUNDS} rounds`, async () => {
    const outcomes = { deleted: 0, connected: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const key = await createProvider(a);
      await connectorKeys(b); // B knows it, as a catalog that is a moment behind would
      const [deleted, made] = await Promise.all([
        a.request('DELETE', `${PROVIDERS}/${key}`, { token: a.platformToken }),
        connect(b, key),
      ]);
      const provider = await a.request('GET', `${PROVIDERS}/${key}`, { token: a.platformToken });
      if (made.status === 201) {
        outcomes.connected++;
        assert.equal(
          deleted.status,
          409,
          `round ${round}: the delete must see the new connection: ${deleted.text}`,
        );
        assert.equal(provider.status, 200, `round ${round}: the connection's provider still exists`);
      } else {
        outcomes.deleted++;
        assert.equal(deleted.status, 204, `round ${round}: ${deleted.text}`);
        assert.equal(made.status, 400, `round ${round}: the create sees the provider gone: ${made.text}`);
        assert.equal(provider.status, 404, `round ${round}: deleted`);
      }
    }
    const orphans = await sql<{ connector_key: string }>`
      select connector_key from connections c where connector_key like 'oauth2:%'
        and not exists (select 1 from oauth_providers p where 'oauth2:' || p.key = c.connector_key)`.execute(
      a.database.kysely,
    );
    assert.deepEqual(orphans.rows, [], 'no connection names a provider that is gone');
    // Which one wins each round is up to timing; both outcomes are fine, neither half of both.
    assert.equal(
      outcomes.deleted + outcomes.connected,
      ROUNDS,
      `every round ended one way: ${JSON.stringify(outcomes)}`,
    );
  });
});
