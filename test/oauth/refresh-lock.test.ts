import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { systemScopeOf } from '../../src/access/scope.js';
import { setAuthorization } from '../../src/oauth/authorization.js';
import { accessTokenFor, type TokenDeps } from '../../src/oauth/tokens.js';
import { createSender } from '../../src/outbound/sender.js';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { ENGINE } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

// docs/decisions/0070-oauth-authorizations-table.md: a refresh locks the connection's row and then
// reads the authorization, which lives in another table. A refresh that waited for that lock while
// tokens were bound under it must see them: on PostgreSQL, one statement that waits for a row lock
// reads a joined table as it was when the statement began, and would have refreshed again. No
// provider answers here: a refresh that calls one fails.

let h: Harness;
let tokens: TokenDeps;
let closeSender: () => Promise<unknown> = async () => undefined;
const skip = ENGINE !== 'postgres' && 'PGlite runs one transaction at a time: nothing waits for a lock';

before(async () => {
  if (skip) return;
  h = await startHarness();
  const sender = createSender({ policy: h.config.delivery, timeoutMs: 2000 });
  closeSender = () => sender.close();
  tokens = { ctx: { db: h.database.kysely, keyring: h.keyring, now: () => new Date() }, sender };
});
after(async () => {
  await closeSender();
  await h?.close();
});

test(
  'a refresh that waited for tokens bound under the connection’s lock uses them, and calls no provider',
  { skip },
  async () => {
    const db = h.database.kysely;
    const { session, tenant } = await makeSignedInTenant(h);
    const key = `lock-${Date.now().toString(36)}`;
    const provider = await h.request('POST', '/api/v1/platform/oauth-providers', {
      token: h.platformToken,
      body: {
        key,
        name: 'Nowhere',
        authorizationUrl: 'https://auth.invalid/authorize',
        tokenUrl: 'https://auth.invalid/token',
        apiBaseUrl: 'https://api.invalid/v1',
        clientId: 'hubgate',
        clientSecret: 'refresh-lock-secret',
      },
    });
    assert.equal(provider.status, 201, provider.text);
    const created = await h.request<{ id: string }>('POST', '/api/v1/integrations/connections', {
      session,
      body: { connectorKey: `oauth2:${key}`, displayName: 'Locked' },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id;
    const scope = systemScopeOf(tenant.id);
    const bind = (accessToken: string, expiresAt: Date) =>
      db.transaction().execute(async (trx) => {
        await sql`select 1 from connections where id = ${id} for update`.execute(trx);
        const credentials = { accessToken, refreshToken: 'r', tokenType: 'Bearer' };
        await setAuthorization(
          trx,
          scope,
          id,
          new Date(),
          { status: 'authorized', expiresAt, credentials },
          h.keyring,
        );
      });
    // A token 10 s from its expiry: the next use refreshes it first.
    await bind('old-token', new Date(Date.now() + 10_000));

    let refreshed: Promise<unknown> | undefined;
    await db.transaction().execute(async (trx) => {
      // As the callback binds newly authorized tokens: the connection's row locked, then bound.
      await sql`select 1 from connections where id = ${id} for update`.execute(trx);
      const credentials = { accessToken: 'new-token', refreshToken: 'r2', tokenType: 'Bearer' };
      const expiresAt = new Date(Date.now() + 3_600_000);
      await setAuthorization(
        trx,
        scope,
        id,
        new Date(),
        { status: 'authorized', expiresAt, credentials },
        h.keyring,
      );
      refreshed = accessTokenFor(tokens, scope, id).then(
        (token) => token.accessToken,
        (error: unknown) => error,
      );
      await waitUntil(
        async () => {
          const waiting = await sql<{ n: number }>`
            select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock'`.execute(db);
          return (waiting.rows[0]?.n ?? 0) > 0;
        },
        { message: 'the refresh to wait for the connection’s lock' },
      );
    });
    assert.equal(await refreshed, 'new-token', 'the refresh did not use the tokens bound while it waited');
  },
);
