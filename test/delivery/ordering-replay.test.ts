import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import type { PublishedEvent } from '../helpers/events.js';
import { makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { logOf, operate, pause, resume } from '../helpers/operate.js';
import { startReceiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';

// docs/api/events.md, Ordering: a key's deliveries keep their publish order when they are sent again
// (recover, resume with replay), also when they were published in one batch, whose events share one
// `createdAt`. The requeue used to order them by creation time and then by their random IDs, so a
// batch's key came back shuffled (issue 37, item 9). Receivers listen on 127.0.0.1 only.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  // Two attempts, the second at once: a broken receiver fails a delivery in milliseconds.
  DELIVERY_RETRY_SCHEDULE: '0',
  DELIVERY_TIMEOUT_MS: '5000',
  RATE_LIMIT_PER_MINUTE: '1000000',
};
const BATCH = 50;
const ROUNDS = 2;

let h: Harness;
before(async () => {
  h = await startHarness({ env: ENV, workers: { pollMs: 50 } });
});
after(() => h.close());

/** A receiver that answers 500 while `broken`, and records the `n` of every event it took (2xx). */
async function keyReceiver(t: TestContext) {
  const state = { broken: false, taken: [] as number[], attempts: 0 };
  const receiver = await startReceiver(t, (r, _i, res) => {
    state.attempts++;
    const body = JSON.parse(r.body) as { data: { n: number } };
    if (state.broken) res.statusCode = 500;
    else state.taken.push(body.data.n);
    res.end();
  });
  return { receiver, state };
}

/** Publishes one batch of BATCH events of one orderingKey, `n` = 1…BATCH in the batch's order. */
async function publishBatch(session: TestSession, orderingKey: string): Promise<string[]> {
  const events = Array.from({ length: BATCH }, (_, i) => ({
    type: 'order.updated',
    data: { n: i + 1 },
    orderingKey,
  }));
  const r = await h.request<{ data: PublishedEvent[] }>('POST', '/api/v1/integrations/events/batch', {
    session,
    body: { events },
  });
  assert.equal(r.status, 202, `the batch answered ${r.status}: ${r.text}`);
  const createdAt = new Set(r.body.data.map((e) => e.createdAt));
  assert.equal(createdAt.size, 1, 'the batch events do not share one createdAt: the test proves less');
  return r.body.data.map((e) => e.id);
}

const inOrder = Array.from({ length: BATCH }, (_, i) => i + 1);

/** Which of the expected order's places came back first out of place, for the failure message. */
function firstOutOfOrder(taken: readonly number[]): string {
  const at = taken.findIndex((n, i) => n !== i + 1);
  return at === -1 ? 'none' : `place ${at + 1} got event ${taken[at]}`;
}

describe('a batch of one key sent again keeps its publish order', () => {
  test('recover of failed deliveries sends the batch key in publish order', async (t) => {
    const { session } = await makeSignedInTenant(h);
    const receiver = await keyReceiver(t);
    const hook = await makeWebhookConnection(h, session, receiver.receiver.url(), { ordering: 'per-key' });
    for (let round = 0; round < ROUNDS; round++) {
      const since = new Date(Date.now() - 1000).toISOString();
      receiver.state.broken = true;
      receiver.state.taken.length = 0;
      await publishBatch(session, `recover-${round}`);
      await waitUntil(async () => (await logOf(h, session, hook.id, 'status=failed')).length === BATCH, {
        message: `round ${round}: the ${BATCH} deliveries of the batch failed at the broken receiver`,
        timeoutMs: 60_000,
      });
      receiver.state.broken = false;
      const recovered = await operate<{ queued: number }>(h, session, hook.id, 'recover', { since });
      assert.equal(recovered.status, 202, `recover answered ${recovered.status}: ${recovered.text}`);
      assert.equal(recovered.body.queued, BATCH, `round ${round}: recover did not queue the batch`);
      await waitUntil(() => receiver.state.taken.length >= BATCH, {
        message: () =>
          `round ${round}: the recovered batch delivered (${receiver.state.taken.length} so far)`,
        timeoutMs: 60_000,
      });
      assert.deepEqual(
        receiver.state.taken,
        inOrder,
        `round ${round}: the recovered key arrived out of publish order (${firstOutOfOrder(receiver.state.taken)})`,
      );
    }
  });

  test('resume with replay, and recover of skipped deliveries, send the batch key in publish order', async (t) => {
    const { session } = await makeSignedInTenant(h);
    const { receiver, state } = await keyReceiver(t);
    const hook = await makeWebhookConnection(h, session, receiver.url(), { ordering: 'per-key' });
    for (let round = 0; round < ROUNDS; round++) {
      for (const how of ['resume with replay', 'recover skipped'] as const) {
        const since = new Date(Date.now() - 1000).toISOString();
        state.taken.length = 0;
        await pause(h, session, hook.id);
        await publishBatch(session, `${how}-${round}`);
        const skipped = await logOf(h, session, hook.id, 'status=skipped');
        assert.equal(
          skipped.length,
          BATCH,
          `round ${round}: the batch was not recorded skipped while paused`,
        );
        if (how === 'resume with replay') {
          const resumed = await resume(h, session, hook.id, { replaySkipped: true });
          assert.equal(resumed.replayed, BATCH, `round ${round}: resume did not replay the batch`);
        } else {
          await resume(h, session, hook.id);
          const recovered = await operate<{ queued: number }>(h, session, hook.id, 'recover', {
            since,
            statuses: ['skipped'],
          });
          assert.equal(recovered.status, 202, `recover answered ${recovered.status}: ${recovered.text}`);
          assert.equal(
            recovered.body.queued,
            BATCH,
            `round ${round}: recover did not queue the skipped batch`,
          );
        }
        await waitUntil(() => state.taken.length >= BATCH, {
          message: () => `round ${round}, ${how}: the batch delivered (${state.taken.length} so far)`,
          timeoutMs: 60_000,
        });
        assert.deepEqual(
          state.taken,
          inOrder,
          `round ${round}, ${how}: the key arrived out of publish order (${firstOutOfOrder(state.taken)})`,
        );
      }
    }
  });
});
