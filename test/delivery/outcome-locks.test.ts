import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { claimDue, leaseEnd } from '../../src/delivery/claim.js';
import { writeOutcomes, type Outcome } from '../../src/delivery/outcomes.js';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { ENGINE } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

// docs/decisions/0059-ordered-delivery.md, lock order: a pause (close() in src/delivery/control.ts) locks a
// connection's open deliveries oldest first. An outcome batch that ends several of them must lock them in
// that order too: one that locked a newer delivery first and then waited for an older one the pause held
// was a deadlock, PostgreSQL dropped the outcome, and the delivery, which had arrived, was sent again once
// its claim ran out. This plays the pause's two locks by hand around a batch whose newer delivery ended
// first. No worker runs, and nothing is sent anywhere.

const WORKER = 'wrk_locks_test';

let h: Harness;
before(async () => {
  h = await startHarness({ env: { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' } });
});
after(() => h.close());

test(
  "an outcome batch locks its deliveries oldest first, as a pause does: neither waits on the other's lock for ever",
  { skip: ENGINE !== 'postgres' && 'PGlite runs one transaction at a time: no two can wait on each other' },
  async () => {
    const db = h.database.kysely;
    const { session } = await makeSignedInTenant(h);
    const hook = await makeWebhookConnection(h, session, 'http://127.0.0.1:9/never-called');
    await publishEvent(h, session, { type: 'locks.first' });
    await publishEvent(h, session, { type: 'locks.second' });
    const now = new Date();
    const claimed = await claimDue(db, {
      workerId: WORKER,
      now,
      leaseUntil: leaseEnd(now, 60_000),
      limit: 10,
    });
    assert.equal(claimed.length, 2, 'both deliveries are claimed by the test worker');
    const [older, newer] = [...claimed].sort(
      (a, b) => new Date(a.created_at).getTime() - new Date(b.created_at).getTime(),
    );
    assert.ok(older && newer && older.created_at < newer.created_at, 'two deliveries of different ages');
    const outcome = (row: typeof older): Outcome => ({
      deliveryId: row.id,
      connectionId: row.connection_id,
      createdAt: row.created_at,
      status: 'delivered',
      attemptCount: 1,
      nextAttemptAt: null,
      deliveredAt: now,
    });

    let written: Promise<unknown> | undefined;
    await db.transaction().execute(async (pause) => {
      // The pause holds the older delivery...
      await sql`select 1 from deliveries where id = ${older.id} for update`.execute(pause);
      // ...while a batch in which the newer one ended first is written.
      written = writeOutcomes(db, WORKER, new Date(), [outcome(newer), outcome(older)]).then(
        () => 'written',
        (error: unknown) => error,
      );
      await waitUntil(
        async () => {
          const waiting = await sql<{ n: number }>`
            select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and query like '%with recorded as%'`.execute(
            db,
          );
          return (waiting.rows[0]?.n ?? 0) > 0;
        },
        { message: 'the outcome write to wait for the lock the pause holds' },
      );
      // The pause goes on to the newer delivery. Had the batch locked it first, one of the two would
      // now be ended by PostgreSQL's deadlock detector (40P01).
      await sql`select 1 from deliveries where id = ${newer.id} for update`.execute(pause);
      await sql`update deliveries set status = 'skipped', next_attempt_at = null
        where id = any(${[older.id, newer.id]}::text[])`.execute(pause);
    });
    assert.equal(await written, 'written', 'the outcome batch was written after the pause, not dropped');

    // What the tenant sees: both attempts that arrived count as delivered, the pause notwithstanding.
    await waitForDeliveries(
      h,
      session,
      hook.id,
      (ds) => ds.length === 2 && ds.every((d) => d.status === 'delivered'),
      { message: 'both deliveries delivered' },
    );
  },
);
