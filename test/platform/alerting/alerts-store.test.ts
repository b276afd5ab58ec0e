import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Kysely } from 'kysely';
import type { DB } from '../../../src/db/schema.js';
import {
  claimDueNotices,
  finishNotice,
  forgetChannels,
  forgetToldState,
  insertPendingNotice,
  purgeAlertHistory,
  readToldStates,
  recordResolvedAlert,
  releaseLease,
  setToldStates,
  takeLease,
} from '../../../src/platform/alerting/alerts-store.js';
import type { ChannelRow } from '../../../src/platform/alerting/channel-store.js';
import type { Condition } from '../../../src/platform/alerting/conditions.js';
import { reconcile, type Reading } from '../../../src/platform/alerting/engine.js';
import { outageAlert } from '../../../src/platform/alerting/evaluation.js';
import { fingerprintOf } from '../../../src/platform/alerting/fingerprint.js';
import type { Waiting } from '../../../src/platform/alerting/notice-plans.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/test-database.js';

// The alert engine's store and its evaluation phase, on the real database (both engines).
const T0 = new Date('2025-01-02T03:00:00.000Z');
const later = (ms: number) => new Date(T0.getTime() + ms);

let testDatabase: TestDatabase;
let db: Kysely<DB>;
before(async () => {
  testDatabase = await createTestDatabase();
  db = testDatabase.database.kysely;
});
after(() => testDatabase.drop());

/** Each test starts from empty alert tables: the engine reads every firing alert, not one tenant's. */
async function emptyAlertTables(): Promise<void> {
  for (const table of ['alerts', 'alert_notifications', 'alert_channel_state', 'alert_leases'] as const) {
    await db.deleteFrom(table).execute();
  }
}

const channel = (id: string, enabled = true): ChannelRow => ({
  id,
  name: id,
  kind: 'WEBHOOK',
  enabled,
  config: {},
  secrets_sealed: '',
  secret_fields: [],
  created_at: T0,
  updated_at: T0,
  last_attempt: null,
});

const condition = (connectionId: string, summary = 'it failed'): Condition => ({
  labels: { alertname: 'DeliveryFailed', tenantId: 'ten_1', connectionId },
  annotations: { summary },
});

const reading = (conditions: Condition[]): Reading => ({
  conditions,
  doc: { revision: 1, defaults: { channelIds: ['chn_a'], repeatIntervalSeconds: 3600 }, rules: [] },
  channels: [channel('chn_a')],
});

test('the lease has one holder at a time, and passes on when it runs out or is given up', async () => {
  await emptyAlertTables();
  const lease = (holder: string, until: Date) => ({ name: 'alert-engine', holder, until });
  assert.equal(await takeLease(db, lease('eng_a', later(5000)), T0), true, 'the free lease cannot be taken');
  assert.equal(
    await takeLease(db, lease('eng_a', later(6000)), later(1000)),
    true,
    'its holder cannot renew it',
  );
  assert.equal(
    await takeLease(db, lease('eng_b', later(7000)), later(2000)),
    false,
    'a second process takes the lease while the first still holds it: two engines would evaluate',
  );
  assert.equal(
    await takeLease(db, lease('eng_b', later(9000)), later(6001)),
    true,
    'a lease that ran out is never taken over: alerts stop when their process dies',
  );
  await releaseLease(db, 'alert-engine', 'eng_a');
  assert.equal(
    await takeLease(db, lease('eng_a', later(10_000)), later(7000)),
    false,
    'a process gave up a lease it no longer held',
  );
  await releaseLease(db, 'alert-engine', 'eng_b');
  assert.equal(
    await takeLease(db, lease('eng_a', later(10_000)), later(7000)),
    true,
    'a lease given up cannot be taken before it runs out',
  );
});

test('evaluations record an alert, queue its notice once the burst ends, then resolve it', async () => {
  await emptyAlertTables();
  const fingerprint = fingerprintOf(condition('con_1').labels);
  let waiting: Waiting = await reconcile(db, reading([condition('con_1')]), new Map(), T0);
  const alert = await db
    .selectFrom('alerts')
    .selectAll()
    .where('fingerprint', '=', fingerprint)
    .executeTakeFirst();
  assert.equal(alert?.status, 'firing', 'a condition that holds is not recorded as a firing alert');
  assert.equal(waiting.size, 1, 'the new alert does not wait for the burst to end');
  assert.equal(await pendingCount(), 0, 'a new alert is queued before its group could grow');

  waiting = await reconcile(db, reading([condition('con_1', 'still failing')]), waiting, later(100));
  const described = await db
    .selectFrom('alerts')
    .selectAll()
    .where('fingerprint', '=', fingerprint)
    .executeTakeFirst();
  assert.equal(described?.annotations.summary, 'still failing', 'the new description is not recorded');
  assert.deepEqual(new Date(described!.starts_at), T0, 'a new description restarts the alert');
  assert.equal(await pendingCount(), 1, 'the group is not queued once the burst ended');
  const told = await readToldStates(db, [fingerprint]);
  assert.equal(told.get(fingerprint)?.get('chn_a')?.status, 'firing', 'the channel is not recorded as told');

  await reconcile(db, reading([]), waiting, later(200));
  const resolved = await db
    .selectFrom('alerts')
    .selectAll()
    .where('fingerprint', '=', fingerprint)
    .executeTakeFirst();
  assert.equal(resolved?.status, 'resolved', 'the alert whose condition ended is still firing');
  assert.deepEqual(new Date(resolved!.ends_at!), later(200), 'the resolved alert does not say when it ended');
  const notices = await db.selectFrom('alert_notifications').selectAll().orderBy('created_at').execute();
  assert.deepEqual(
    notices.map((n) => [n.status, n.state]),
    [
      ['firing', 'failed'],
      ['resolved', 'pending'],
    ],
    'the unsent firing notice is not superseded by the resolved one (it would arrive after it)',
  );
  assert.equal(
    (await readToldStates(db, [fingerprint])).get(fingerprint)?.get('chn_a')?.status,
    'resolved',
    'the channel is not recorded as told the alert resolved',
  );
});

async function pendingCount(): Promise<number> {
  const rows = await db
    .selectFrom('alert_notifications')
    .select('id')
    .where('state', '=', 'pending')
    .execute();
  return rows.length;
}

test('a claimed notice is not claimed again, and its attempt ends only while the claim holds', async () => {
  await emptyAlertTables();
  const notice = {
    id: 'ntf_store_1',
    group_key: 'DeliveryFailed/ten_1',
    channel_id: 'chn_a',
    status: 'firing' as const,
    alerts: [],
    truncated_alerts: 0,
  };
  await insertPendingNotice(db, notice, T0);
  const claimed = await claimDueNotices(db, later(1000), later(60_000), 50);
  assert.deepEqual(
    claimed.map((n) => n.id),
    ['ntf_store_1'],
    'the due notice is not claimed',
  );
  assert.deepEqual(
    await claimDueNotices(db, later(2000), later(61_000), 50),
    [],
    'a claimed notice is claimed twice',
  );
  const sent = {
    state: 'sent' as const,
    attempts: 1,
    nextAttemptAt: null,
    lastError: null,
    sentAt: later(3000),
  };
  await finishNotice(db, { id: notice.id, until: later(99_000) }, sent);
  const stale = await db
    .selectFrom('alert_notifications')
    .selectAll()
    .where('id', '=', notice.id)
    .executeTakeFirst();
  assert.equal(stale?.state, 'pending', 'an attempt whose claim was lost overwrote the notice');
  await finishNotice(db, { id: notice.id, until: later(60_000) }, sent);
  const done = await db
    .selectFrom('alert_notifications')
    .selectAll()
    .where('id', '=', notice.id)
    .executeTakeFirst();
  assert.deepEqual(
    [done?.state, done?.attempts],
    ['sent', 1],
    'the attempt that held the claim is not recorded',
  );
});

test('told states are set, read, and forgotten by alert or by channel', async () => {
  await emptyAlertTables();
  const [a, b] = [outageAlert(T0), { ...outageAlert(T0), fingerprint: 'fp_other' }];
  await setToldStates(db, 'chn_a', [a, b], T0);
  await setToldStates(db, 'chn_b', [a], T0);
  await setToldStates(db, 'chn_a', [{ ...a, status: 'resolved' }], later(1000));
  const told = await readToldStates(db, [a.fingerprint, b.fingerprint]);
  assert.deepEqual(
    told.get(a.fingerprint)?.get('chn_a'),
    { status: 'resolved', at: later(1000) },
    'telling a channel again does not replace what it was told',
  );
  await forgetToldState(db, a.fingerprint, 'chn_b');
  await forgetChannels(db, ['chn_a']);
  assert.equal(
    (await readToldStates(db, [a.fingerprint, b.fingerprint])).size,
    0,
    'a forgotten told state remains',
  );
  assert.equal((await readToldStates(db, [])).size, 0, 'no alerts cannot have been told anything');
});

test('the end of an outage is recorded, and old history is purged but never what fires or waits', async () => {
  await emptyAlertTables();
  const outage = outageAlert(T0, later(1000));
  await recordResolvedAlert(db, outage, later(1000));
  await recordResolvedAlert(db, outage, later(2000));
  const row = await db
    .selectFrom('alerts')
    .selectAll()
    .where('fingerprint', '=', outage.fingerprint)
    .executeTakeFirst();
  assert.equal(row?.status, 'resolved', 'the outage is not recorded as resolved');
  await setToldStates(db, 'chn_a', [outage], later(1000));
  await reconcile(db, reading([condition('con_still')]), new Map(), T0);
  const waitingNotice = { id: 'ntf_waits', group_key: 'g', channel_id: 'chn_a', status: 'firing' as const };
  await insertPendingNotice(db, { ...waitingNotice, alerts: [], truncated_alerts: 0 }, T0);

  await purgeAlertHistory(db, later(3000));
  const left = await db.selectFrom('alerts').select(['fingerprint', 'status']).execute();
  assert.deepEqual(
    left.map((r) => r.status),
    ['firing'],
    'the purge kept an old resolved alert, or deleted one still firing',
  );
  assert.equal(
    (await readToldStates(db, [outage.fingerprint])).size,
    0,
    'a purged alert left its told states',
  );
  assert.equal(await pendingCount(), 1, 'the purge deleted a notice still waiting to be sent');
});
