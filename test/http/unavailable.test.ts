import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openDatabase } from '../../src/db/database.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';

// A database that goes away only exists for PostgreSQL: the embedded engine lives inside the process
// and cannot become unreachable. So this file has tests only in the PostgreSQL run of the suite.
if (ENGINE === 'postgres') {
  let h: Harness;
  let proxy: TcpProxy;
  let direct: TestDatabase;

  before(async () => {
    direct = await createTestDatabase();
    if (direct.target.kind !== 'postgres') throw new Error('unreachable');
    const url = new URL(direct.target.url);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    const proxied = await openDatabase({ kind: 'postgres', url: url.toString() });
    h = await startHarness({ testDatabase: { ...direct, database: proxied, drop: async () => {} } });
  });
  after(async () => {
    await h.close();
    await h.database.close();
    await proxy.close();
    await direct.drop();
  });

  test('a database that goes away turns /readyz and API calls into 503 unavailable with Retry-After, and the service recovers by itself', async () => {
    assert.equal(
      (await h.request('GET', '/readyz')).status,
      200,
      '/readyz is not ready with the database up',
    );
    assert.equal(
      (await h.request('GET', '/api/v1/platform/tenants', { token: h.platformToken })).status,
      200,
      'the API fails with the database up',
    );

    await proxy.cut();
    const ready = await h.request('GET', '/readyz');
    assert.equal(ready.status, 503, '/readyz answers other than 503 while the database is unreachable');
    assert.equal(
      ready.body.code,
      'unavailable',
      '/readyz is refused with another code than unavailable while the database is unreachable',
    );
    assert.ok(
      Number(ready.headers.get('retry-after')) > 0,
      '/readyz does not say when to retry while the database is unreachable',
    );

    const api = await h.request('GET', '/api/v1/platform/tenants', { token: h.platformToken });
    assert.equal(api.status, 503, 'the API answers other than 503 while the database is unreachable');
    assert.equal(
      api.body.code,
      'unavailable',
      'the API is refused with another code than unavailable while the database is unreachable',
    );
    assert.ok(
      Number(api.headers.get('retry-after')) > 0,
      'the API does not say when to retry while the database is unreachable',
    );
    assert.equal((await h.request('GET', '/healthz')).status, 200, 'the process itself is still up');

    await proxy.restore();
    assert.equal(
      (await h.request('GET', '/readyz')).status,
      200,
      '/readyz does not recover once the database is back',
    );
    const back = await h.request('POST', '/api/v1/platform/tenants', {
      token: h.platformToken,
      body: { name: 'after outage' },
    });
    assert.equal(back.status, 201, 'the API cannot write once the database is back');
  });
}
