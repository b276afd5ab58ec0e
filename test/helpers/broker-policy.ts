import assert from 'node:assert/strict';
import type { Harness, TestSession } from './harness.js';

/**
 * A broker connection whose URL this hub's policy refuses now (a scheme without TLS, an address out of
 * range), as a hub that allowed it made it before the policy changed: the API refuses the URL at create
 * (checked here, `400 destination_forbidden` on `url`), so the connection is made with `allowedUrl` and
 * the refused URL written to its row, where only the destination's check at connect can stop it.
 */
export async function madeBeforeThePolicy(
  h: Harness,
  session: TestSession,
  connectorKey: string,
  body: { url: string } & Record<string, unknown>,
  allowedUrl: string,
  create: (body: { url: string } & Record<string, unknown>) => Promise<string>,
): Promise<string> {
  const refused = await h.request('POST', '/api/v1/integrations/connections', {
    session,
    body: { connectorKey, displayName: 'refused', ...body },
  });
  assert.equal(refused.status, 400, `${body.url} was not refused at create: ${refused.text}`);
  assert.equal(refused.body?.code, 'destination_forbidden', `${body.url}: ${refused.text}`);
  assert.equal(refused.body?.errors?.[0]?.path, 'url', `${body.url}: the refusal names no field`);
  const id = await create({ ...body, url: allowedUrl });
  const row = await h.database.kysely
    .selectFrom('connections')
    .select('config')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  const config = (typeof row.config === 'string' ? JSON.parse(row.config) : row.config) as object;
  await h.database.kysely
    .updateTable('connections')
    .set({ config: JSON.stringify({ ...config, url: body.url }) })
    .where('id', '=', id)
    .execute();
  return id;
}
