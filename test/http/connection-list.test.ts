import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const CONNECTIONS = '/api/v1/integrations/connections';

test('the connection list shows each connection exactly as its own GET does', async () => {
  const { session, tenant } = await makeSignedInTenant(h);
  const ids: string[] = [];
  for (const name of ['plain', 'bound', 'revoked', 'microseconds']) {
    const r = await h.request('POST', CONNECTIONS, {
      session,
      body: { connectorKey: 'webhook', displayName: name, url: 'https://hooks.example.com/list' },
    });
    assert.equal(r.status, 201, r.text);
    ids.push(r.body.id);
  }
  const [, bound, revoked, micro] = ids as [string, string, string, string];
  assert.equal(
    (await h.request('PUT', `${CONNECTIONS}/${bound}/credentials`, { session, body: {} })).status,
    200,
    'binding credentials fails',
  );
  assert.equal(
    (await h.request('POST', `${CONNECTIONS}/${revoked}/revoke`, { session })).status,
    200,
    'revoking the connection fails',
  );
  // Timestamps the service did not write itself (a migration, an operator) may carry microseconds:
  // the API cuts them to milliseconds, as a Date read from the driver does, on every route alike.
  await h.database.kysely
    .updateTable('connections')
    .set({ created_at: '2026-03-01T12:34:56.789987Z', revoked_at: '2026-03-02T00:00:00.000999Z' })
    .where('tenant_id', '=', tenant.id)
    .where('id', '=', micro)
    .execute();

  const one = async (id: string) => (await h.request('GET', `${CONNECTIONS}/${id}`, { session })).body;
  const listed = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `?limit=1&cursor=${cursor}` : '?limit=1';
    const page = await h.request('GET', `${CONNECTIONS}${query}`, { session });
    assert.equal(page.status, 200, page.text);
    listed.push(...page.body.data);
    cursor = page.body.nextCursor;
  } while (cursor);

  assert.equal(listed.length, 4, "paging the list does not show the tenant's four connections");
  for (const item of listed)
    assert.deepEqual(
      item,
      await one(item.id),
      `${item.displayName}: the list shows the connection differently from its own GET`,
    );
  const byId = new Map(listed.map((item) => [item.id, item]));
  assert.equal(
    byId.get(bound).credentialsBound,
    true,
    "the list does not show the bound connection's credentials as bound",
  );
  assert.equal(
    byId.get(revoked).status,
    'disabled',
    'the list does not show the revoked connection as disabled',
  );
  assert.match(
    byId.get(revoked).revokedAt,
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
    'the list does not show revokedAt as an ISO time with milliseconds',
  );
  assert.equal(
    byId.get(micro).createdAt,
    '2026-03-01T12:34:56.789Z',
    'a stored createdAt with microseconds is not cut to milliseconds',
  );
  assert.equal(
    byId.get(micro).revokedAt,
    '2026-03-02T00:00:00.000Z',
    'a stored revokedAt with microseconds is not cut to milliseconds',
  );
  // Newest first: the connection moved into March comes last.
  assert.equal(listed[listed.length - 1].id, micro, 'the list is not newest first');
});
