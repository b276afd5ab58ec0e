import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { assertNoLeak, makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';
import { grantAccess } from '../mcp-oauth/flow.js';
import { connectAgent, MCP_PATH } from './helpers.js';

// Issue 41's "done when": an MCP client that signed in with OAuth finds out why a tenant's receiver
// fails, has it fixed, and replays what failed, with tools alone. The receiver is a real HTTP server
// on 127.0.0.1; deliveries are made by the app's own workers.

const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_RETRY_SCHEDULE: '0,0',
  DELIVERY_TIMEOUT_MS: '5000',
};

let h: Harness;
before(async () => {
  h = await startHarness({ env: ENV, workers: { pollMs: 50 } });
});
after(() => h.close());

const structured = <T>(result: CallToolResult): T => {
  assert.equal(result.isError, undefined, `the tool answered an error: ${JSON.stringify(result)}`);
  return result.structuredContent as T;
};

test('an agent finds why a receiver fails, and replays what failed once it is fixed', async (t) => {
  let fixed = false;
  const receiver = await startReceiver(t, (_request, _index, response) => {
    if (fixed) return void response.end('ok');
    response.writeHead(422, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: 'unknown field customer_ref' }));
  });
  const { session } = await makeSignedInTenant(h);
  const hook = await makeWebhookConnection(h, session, receiver.url());
  const granted = await grantAccess(h.baseUrl, new URL(MCP_PATH, h.config.publicUrl).href, session, [
    'integrations:OPERATOR',
  ]);
  const seen: string[] = [];
  const agent = await connectAgent(h, granted.access, seen);

  for (const id of [1, 2]) {
    structured(
      await agent.tool('publish_event', { type: 'order.created', data: { id, customer_ref: 'c-9' } }),
    );
  }
  // What the agent sees: the connection, then the failed deliveries and why.
  type Page = { data: Array<{ id: string; status: string; eventId: string }> };
  const failed = await waitUntil(
    async () => {
      const page = structured<Page>(
        await agent.tool('list_deliveries', { connectionId: hook.id, status: 'failed' }),
      );
      return page.data.length === 2 && page.data;
    },
    { message: 'both deliveries failing' },
  );
  type Detail = {
    attempts: Array<{ responseStatus: number | null; response: { body: string | null } | null }>;
  };
  const detail = structured<Detail>(
    await agent.tool('get_delivery', { connectionId: hook.id, deliveryId: failed[0]?.id }),
  );
  const last = detail.attempts.at(-1);
  assert.equal(last?.responseStatus, 422, 'the agent cannot see what the receiver answered');
  assert.match(last?.response?.body ?? '', /unknown field customer_ref/, 'the agent cannot see why');

  // The receiver's owner fixes it; the agent checks with a test event, then replays what failed.
  fixed = true;
  const beforeFix = receiver.received.length;
  structured(await agent.tool('send_test_event', { connectionId: hook.id }));
  const recovered = structured<{ queued: number }>(
    await agent.tool('recover_deliveries', {
      connectionId: hook.id,
      since: new Date(Date.now() - 3_600_000).toISOString(),
    }),
  );
  assert.equal(recovered.queued, 2, 'recover did not queue the two failed deliveries');
  await waitUntil(
    async () => {
      const page = structured<Page>(
        await agent.tool('list_deliveries', { connectionId: hook.id, status: 'delivered' }),
      );
      return page.data.filter((d) => failed.some((f) => f.id === d.id)).length === 2;
    },
    { message: 'the replayed deliveries delivered' },
  );
  const replayed = receiver.received.slice(beforeFix).filter((r) => r.body.includes('customer_ref'));
  assert.equal(replayed.length, 2, 'the receiver did not get each failed event once more');
  await agent.close();
  // No tool result holds the signing secret or the agent's own tokens.
  for (const secret of [hook.secret, granted.access, granted.refresh]) {
    assert.ok(!seen.some((result) => result.includes(secret)), 'a secret appeared in a tool result');
  }
  assertNoLeak(h, [granted.access, granted.refresh], [hook.secret]);
});
