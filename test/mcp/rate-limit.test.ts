import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { makeKey, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { MCP_PATH } from './helpers.js';

// A tool call counts once against its key's rate limit (docs/api/mcp.md): the MCP request is
// counted; the request it makes into the tool's route is not counted again.

let h: Harness;
before(async () => {
  h = await startHarness({ env: { RATE_LIMIT_PER_MINUTE: '12' } });
});
after(() => h.close());

const call = (secret: string, id: number) =>
  fetch(`${h.baseUrl}${MCP_PATH}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${secret}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'list_connections', arguments: {} },
    }),
  });

test('each tool call spends one request of the key’s limit, and the limit refuses the one over it', async () => {
  const { session } = await makeSignedInTenant(h);
  const key = await makeKey(h, session, { scopes: ['integrations:READER'] });
  const remaining: number[] = [];
  for (let i = 1; i <= 12; i += 1) {
    const r = await call(key.secret, i);
    const text = await r.text();
    assert.equal(r.status, 200, text);
    const body = JSON.parse(text) as { result: { isError?: boolean } };
    assert.equal(body.result.isError, undefined, `call ${i} was refused: ${JSON.stringify(body)}`);
    remaining.push(Number(r.headers.get('ratelimit-remaining')));
  }
  assert.deepEqual(
    remaining,
    Array.from({ length: 12 }, (_, i) => 11 - i),
    'a tool call spent more than one request',
  );
  const over = await call(key.secret, 13);
  assert.equal(over.status, 429, 'the 13th call within the minute passed');
});
