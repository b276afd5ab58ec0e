import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { randomBase62 } from '../../src/crypto/base62.js';
import { openDatabase, type Database, type StorageTarget } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';

export type TestEngine = 'pglite' | 'postgres';

/** The engine this run of the suite tests: PGlite always; PostgreSQL when scripts/test.mjs asks. */
export const ENGINE: TestEngine = process.env.HUBGATE_TEST_ENGINE === 'postgres' ? 'postgres' : 'pglite';

export function testDatabaseUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('HUBGATE_TEST_ENGINE=postgres needs TEST_DATABASE_URL');
  return url;
}

export interface TestDatabase {
  database: Database;
  target: StorageTarget;
  /** Another connection to the same database, as a second process would have. */
  openAnother(): Promise<Database>;
  drop(): Promise<void>;
}

const MIGRATIONS_DIR = new URL('../../src/db/migrations/', import.meta.url);

/** Changes whenever a migration (or the PGlite version) does, so a stale template is never used. */
function templateKey(): string {
  const hash = createHash('sha256');
  for (const name of readdirSync(MIGRATIONS_DIR).sort())
    hash.update(name).update(readFileSync(new URL(name, MIGRATIONS_DIR)));
  hash.update(readFileSync(new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url)));
  return hash.digest('hex').slice(0, 16);
}

/**
 * A new PGlite costs seconds (initdb); loading a dump costs half a second. The first test file to
 * need one migrates a template and leaves its dump in the temp dir; every later file loads it.
 */
async function pgliteTemplate(): Promise<Blob> {
  const path = join(tmpdir(), `hubgate-test-template-${templateKey()}.tgz`);
  if (existsSync(path)) return new Blob([readFileSync(path)]);
  const fresh = await openDatabase({ kind: 'memory' });
  await migrateToLatest(fresh);
  const dump = await fresh.pglite!.dumpDataDir('gzip');
  await fresh.close();
  const bytes = Buffer.from(await dump.arrayBuffer());
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, bytes);
  renameSync(partial, path);
  return new Blob([bytes]);
}

/** One statement on the server's default database (create or drop a test database). */
export async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** A database of its own for one test file, migrated, on this run's engine. */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (ENGINE === 'pglite') {
    const target: StorageTarget = { kind: 'memory', seed: await pgliteTemplate() };
    const database = await openDatabase(target);
    return {
      database,
      target,
      openAnother: () => {
        throw new Error('an in-memory PGlite database belongs to one process; this test needs PostgreSQL');
      },
      drop: () => database.close(),
    };
  }
  const name = `hubgate_test_${randomBase62(12).toLowerCase()}`;
  await adminQuery(`create database ${name}`);
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${name}`;
  const target: StorageTarget = { kind: 'postgres', url: url.toString() };
  const database = await openDatabase(target);
  await migrateToLatest(database);
  const others: Database[] = [];
  return {
    database,
    target,
    openAnother: async () => {
      const other = await openDatabase(target);
      others.push(other);
      return other;
    },
    drop: async () => {
      await Promise.all([database, ...others].map((d) => d.close()));
      await adminQuery(`drop database if exists ${name} with (force)`);
    },
  };
}
