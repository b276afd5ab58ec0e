import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { systemScopeOf } from '../../src/access/scope.js';
import { connectionOr404, toConnection } from '../../src/connections/connections.js';
import { randomBase62 } from '../../src/crypto/base62.js';
import { newId } from '../../src/crypto/ids.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { findAuthorization } from '../../src/oauth/store.js';
import { migrateBefore } from '../helpers/migrations.js';
import { adminQuery, ENGINE, testDatabaseUrl } from '../helpers/test-database.js';

// 0022_oauth_authorizations on a database whose OAuth2 connections hold their authorization in
// `connections`: each keeps it (status, scopes, expiry, a lease still held) in the new table, and a
// connection of another connector still has none. On this run's engine, from an empty database.

async function emptyDatabase(): Promise<{ database: Database; drop: () => Promise<void> }> {
  if (ENGINE === 'pglite') {
    const database = await openDatabase({ kind: 'memory' });
    return { database, drop: () => database.close() };
  }
  const name = `hubgate_test_${randomBase62(12).toLowerCase()}`;
  await adminQuery(`create database ${name}`);
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${name}`;
  const database = await openDatabase({ kind: 'postgres', url: url.toString() });
  return {
    database,
    drop: async () => {
      await database.close();
      await adminQuery(`drop database if exists ${name} with (force)`);
    },
  };
}

test('an OAuth2 connection authorized before 0022 keeps its authorization, and its lease', async () => {
  const { database, drop } = await emptyDatabase();
  try {
    const db = database.kysely;
    await migrateBefore(db, '0022');

    const at = new Date('2026-01-02T03:04:05.000Z');
    const expiresAt = new Date('2026-01-02T04:04:05.123Z');
    const leaseUntil = new Date('2026-01-02T03:05:00.456Z');
    await sql`insert into tenants (id, name, created_at) values ('ten_m22', 'Before', ${at})`.execute(db);
    const connection = (id: string, connectorKey: string) =>
      sql`insert into connections (id, tenant_id, connector_key, display_name, status, config, created_at)
        values (${id}, 'ten_m22', ${connectorKey}, ${id}, 'active', '{}', ${at})`.execute(db);
    const [authorized, waiting, webhook] = [newId('con'), newId('con'), newId('con')];
    await connection(authorized, 'oauth2:idp');
    await connection(waiting, 'oauth2:idp');
    await connection(webhook, 'webhook');
    await sql`update connections set authorization_status = 'authorized',
        authorization_scopes = ${JSON.stringify(['read', 'write'])}, authorization_expires_at = ${expiresAt},
        authorization_refreshing_until = ${leaseUntil}
      where id = ${authorized}`.execute(db);
    await sql`update connections set authorization_status = 'none', authorization_scopes = '[]'
      where id = ${waiting}`.execute(db);

    const applied = await migrateToLatest(database);
    assert.equal(applied[0], '0022_oauth_authorizations', applied.join());
    const scope = systemScopeOf('ten_m22');
    const shown = async (id: string) => toConnection(await connectionOr404(db, scope, id)).authorization;
    assert.deepEqual(
      await shown(authorized),
      { status: 'authorized', scopes: ['read', 'write'], expiresAt: expiresAt.toISOString() },
      'an authorized connection lost its authorization',
    );
    assert.deepEqual(
      await shown(waiting),
      { status: 'none', scopes: [], expiresAt: null },
      'a connection not yet authorized lost its authorization',
    );
    assert.equal(await shown(webhook), null, 'a webhook connection gained an authorization');
    const lease = (await findAuthorization(db, scope, authorized))?.refreshing_until;
    assert.equal(
      lease && new Date(lease).getTime(),
      leaseUntil.getTime(),
      'a refresh lease held across the upgrade was dropped',
    );
  } finally {
    await drop();
  }
});
