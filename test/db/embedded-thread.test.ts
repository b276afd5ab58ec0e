import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import { DataDirInUseError } from '../../src/db/data-dir-lock.js';
import { isDatabaseUnavailable, openDatabase, type Database } from '../../src/db/database.js';
import { runCli, startServe } from '../helpers/cli.js';
import { startReceiver } from '../helpers/receiver.js';
import { ENGINE } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

// The embedded database on a thread of its own (docs/operators/deployment.md#embedded-mode): the HTTP
// thread goes on while a statement runs, a thread that dies comes back on the same directory without
// losing what was committed or finishing half a transaction, and a process killed while publishing
// leaves every answered event to be delivered after the restart. PGlite only.
if (ENGINE === 'pglite') {
  const root = mkdtempSync(join(tmpdir(), 'hubgate-thread-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  let dirs = 0;
  const newDir = () => join(root, `data-${++dirs}`);

  const count = async (db: Database, table: string) =>
    Number(
      (await sql<{ n: string }>`select count(*) as n from ${sql.table(table)}`.execute(db.kysely)).rows[0]!.n,
    );

  /** Waits until the database answers again after its thread ended. */
  const back = (db: Database) =>
    waitUntil(
      () =>
        db.ping().then(
          () => true,
          () => false,
        ),
      {
        message: 'the embedded database to answer again after its thread ended',
      },
    );

  describe('the embedded database thread', () => {
    let db: Database;
    const dataDir = newDir();

    test('opens a new data directory, and a second open of it in this process is refused', async () => {
      db = await openDatabase({ kind: 'embedded', dataDir });
      assert.ok(db.thread?.worker, 'the database runs on a thread of its own');
      await assert.rejects(
        openDatabase({ kind: 'embedded', dataDir }),
        DataDirInUseError,
        'one data directory is opened by one database at a time, even within one process',
      );
      await sql`create table marks (n int primary key)`.execute(db.kysely);
    });

    test('this thread keeps running while a long statement runs on the database thread', async () => {
      let ticks = 0;
      const timer = setInterval(() => ticks++, 10);
      try {
        await sql`select pg_sleep(1)`.execute(db.kysely);
      } finally {
        clearInterval(timer);
      }
      // With the database on this thread, a statement holds it whole: no tick at all.
      assert.ok(ticks >= 5, `the event loop ticked ${ticks} times during a one-second statement`);
    });

    test('a statement in flight when the thread ends fails as a lost connection; committed rows survive', async () => {
      await sql`insert into marks (n) select generate_series(1, 100)`.execute(db.kysely);
      const long = sql`select pg_sleep(30)`.execute(db.kysely);
      await waitUntil(() => db.thread?.worker, { message: 'the thread' });
      // Let the statement reach the thread, then end the thread as a fault in it would.
      await new Promise((resolve) => setImmediate(resolve));
      await db.thread!.worker!.terminate();
      const error = await long.then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(error instanceof Error, 'the statement in flight failed');
      assert.ok(isDatabaseUnavailable(error), `it is a lost connection (503), not a bug: ${String(error)}`);
      await back(db);
      assert.equal(await count(db, 'marks'), 100, 'every committed row is there after the restart');
    });

    test('a transaction whose thread ended is not continued on the new thread, and none of it stays', async () => {
      const first = db.thread!.worker;
      const outcome = await db.kysely
        .transaction()
        .execute(async (trx) => {
          await sql`insert into marks (n) values (1001)`.execute(trx);
          await first!.terminate();
          await waitUntil(() => db.thread?.worker !== undefined && db.thread.worker !== first, {
            message: 'a new database thread',
          });
          await sql`insert into marks (n) values (1002)`.execute(trx);
          return 'committed';
        })
        .catch((error: unknown) => error);
      assert.ok(outcome instanceof Error, `the transaction failed: ${String(outcome)}`);
      assert.ok(isDatabaseUnavailable(outcome), `as a lost connection: ${String(outcome)}`);
      await back(db);
      const left = await sql<{ n: number }>`select n from marks where n > 1000`.execute(db.kysely);
      assert.deepEqual(left.rows, [], 'neither the row before the end nor the one after it was kept');
      assert.equal(await count(db, 'marks'), 100, 'and the database goes on as before');
    });

    test("statements outside a transaction are never run inside another connection's transaction", async () => {
      await sql`create table ledger (n int primary key, note text)`.execute(db.kysely);
      // Each transaction writes a row and is rolled back after letting others run; the statements
      // sent meanwhile outside it must all stay, and none of the rolled-back rows.
      const outside: number[] = [];
      const sentOutside: Array<Promise<unknown>> = [];
      await Promise.all(
        Array.from({ length: 5 }, (_, t) =>
          db.kysely
            .transaction()
            .execute(async (trx) => {
              await sql`insert into ledger (n, note) values (${1000 + t}, 'inside')`.execute(trx);
              // Sent while this transaction holds the session, by another connection.
              for (let i = 0; i < 8; i++) {
                const n = t * 8 + i;
                outside.push(n);
                sentOutside.push(
                  sql`insert into ledger (n, note) values (${n}, 'outside')`.execute(db.kysely),
                );
              }
              await sql`select pg_sleep(0.01)`.execute(trx);
              throw new Error('roll back');
            })
            .catch(() => undefined),
        ),
      );
      await Promise.all(sentOutside);
      outside.sort((a, b) => a - b);
      const rows = await sql<{ n: number; note: string }>`select n, note from ledger order by n`.execute(
        db.kysely,
      );
      assert.deepEqual(
        rows.rows,
        outside.map((n) => ({ n, note: 'outside' })),
        'every statement outside the transactions stayed, and nothing of the rolled-back ones',
      );
    });

    test('closing ends the thread and frees the directory for the next open', async () => {
      const worker = db.thread!.worker!;
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      await db.close();
      await exited;
      const again = await openDatabase({ kind: 'embedded', dataDir });
      try {
        assert.equal(await count(again, 'marks'), 100, 'the rows are there for the next open');
      } finally {
        await again.close();
      }
    });
  });

  describe('serve on the embedded database, killed while publishing', () => {
    test('every event answered before kill -9 is delivered after the restart, and the lock is taken over', async (t) => {
      const dataDir = newDir();
      const receiver = await startReceiver(t);
      const env = {
        DATA_DIR: dataDir,
        HUBGATE_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
        DELIVERY_ALLOW_HTTP: 'true',
        DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
        RATE_LIMIT_PER_MINUTE: '1000000',
      };
      const created = await runCli(['platform-key', 'create', '--name', 'ops'], env);
      assert.equal(created.code, 0, `platform-key create: ${created.stderr}`);
      const platformKey = (JSON.parse(created.stdout) as { secret: string }).secret;

      let server = await startServe(env, t);
      const call = async (method: string, path: string, auth: string, body?: unknown) => {
        const response = await fetch(`${server.baseUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      };
      const tenant = await call('POST', '/api/v1/platform/tenants', platformKey, {
        name: 'Killed',
        entitlements: ['integrations'],
      });
      assert.equal(tenant.status, 201, `tenant: ${JSON.stringify(tenant.body)}`);
      const credentials = { email: 'killed@example.com', password: 'a long enough password' };
      const user = await call(
        'POST',
        `/api/v1/platform/tenants/${String(tenant.body.id)}/users`,
        platformKey,
        {
          ...credentials,
          role: 'COMPANY_IT_ADMIN',
        },
      );
      assert.equal(user.status, 201, `user: ${JSON.stringify(user.body)}`);
      const login = await fetch(`${server.baseUrl}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(credentials),
      });
      const session = {
        cookie: login.headers
          .getSetCookie()
          .map((c) => c.split(';')[0])
          .join('; '),
        'x-csrf-token': String(((await login.json()) as { csrfToken: string }).csrfToken),
        'content-type': 'application/json',
      };
      const key = await fetch(`${server.baseUrl}/api/v1/company/api-keys`, {
        method: 'POST',
        headers: session,
        body: JSON.stringify({
          name: 'publisher',
          scopes: ['integrations:OPERATOR'],
          expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
        }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
      assert.equal(key.status, 201, `key: ${JSON.stringify(key.body)}`);
      const secret = String(key.body.secret);
      const withSession = async (method: string, path: string, body: unknown) => {
        const r = await fetch(`${server.baseUrl}${path}`, {
          method,
          headers: session,
          body: JSON.stringify(body),
        });
        return { status: r.status, body: (await r.json()) as Record<string, unknown> };
      };
      const connection = await withSession('POST', '/api/v1/integrations/connections', {
        connectorKey: 'webhook',
        displayName: 'receiver',
        url: receiver.url(),
      });
      assert.equal(connection.status, 201, `connection: ${JSON.stringify(connection.body)}`);
      const bound = await withSession(
        'PUT',
        `/api/v1/integrations/connections/${String(connection.body.id)}/credentials`,
        {},
      );
      assert.equal(bound.status, 200, `credentials: ${JSON.stringify(bound.body)}`);

      // Publishers go on until the process dies under them; every 202 is a promise to deliver.
      const answered: string[] = [];
      let killed = false;
      const publisher = async () => {
        while (!killed) {
          const r = await call('POST', '/api/v1/integrations/events', secret, {
            type: 'test.killed',
            data: { n: answered.length },
          }).catch(() => undefined);
          if (r?.status === 202) answered.push(String(r.body.id));
        }
      };
      const publishers = Array.from({ length: 8 }, publisher);
      await waitUntil(() => answered.length >= 200, { message: () => `200 answers (${answered.length})` });
      server.child.kill('SIGKILL');
      killed = true;
      await Promise.all(publishers);
      await server.stop();

      server = await startServe(env, t);
      const missing = () => {
        const seen = new Set(receiver.received.map((r) => String(r.headers['webhook-id'])));
        return answered.filter((id) => !seen.has(id));
      };
      await waitUntil(() => missing().length === 0, {
        message: () =>
          `every answered event at the receiver (${missing().length} of ${answered.length} missing)`,
        timeoutMs: 60_000,
      });
    });
  });
}
