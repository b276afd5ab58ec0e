import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { migrateBefore } from '../helpers/migrations.js';

// 0006_alert_groups on a database that already sent and queued notices of one alert each: they
// become notices of a group of one, and one whose alert is gone stops waiting.
test('notices written before grouping become groups of one', async () => {
  const database = await openDatabase({ kind: 'memory' });
  try {
    const db = database.kysely;
    await migrateBefore(db, '0006');

    const at = new Date('2025-01-02T03:04:05.000Z');
    await sql`insert into alerts (fingerprint, labels, annotations, status, starts_at, ends_at, updated_at)
      values ('fp_1', ${JSON.stringify({ alertname: 'DeliveryFailed', tenantId: 'ten_1', connectionId: 'con_1' })},
        ${JSON.stringify({ summary: 'it failed' })}, 'resolved', ${at}, ${at}, ${at})`.execute(db);
    for (const [id, fingerprint, status, state] of [
      ['ntf_firing', 'fp_1', 'firing', 'sent'],
      ['ntf_resolved', 'fp_1', 'resolved', 'pending'],
      ['ntf_orphan', 'fp_gone', 'firing', 'pending'],
    ]) {
      await sql`insert into alert_notifications
        (id, fingerprint, channel_id, status, state, attempts, next_attempt_at, last_error, created_at, sent_at)
        values (${id}, ${fingerprint}, 'chn_1', ${status}, ${state}, 0, ${at}, null, ${at}, null)`.execute(
        db,
      );
    }

    const applied = await migrateToLatest(database);
    assert.equal(applied[0], '0006_alert_groups', applied.join());
    const rows = await db.selectFrom('alert_notifications').selectAll().orderBy('id').execute();
    const byId = new Map(rows.map((row) => [row.id, row]));
    const resolved = byId.get('ntf_resolved');
    assert.equal(
      resolved?.group_key,
      'DeliveryFailed/ten_1',
      'an old resolved notice is not grouped by alert name and tenant',
    );
    assert.equal(resolved?.state, 'pending', 'an old pending notice no longer waits to be sent');
    assert.equal(resolved?.truncated_alerts, 0, 'an old notice claims alerts were left out');
    assert.equal(resolved?.alerts.length, 1, 'an old notice does not hold exactly its one alert');
    const [alert] = resolved?.alerts ?? [];
    assert.equal(alert?.status, 'resolved', 'the alert in an old notice lost its resolved status');
    assert.equal(alert?.labels.connectionId, 'con_1', 'the alert in an old notice lost its labels');
    assert.equal(
      new Date(alert?.startsAt ?? '').getTime(),
      at.getTime(),
      'the alert in an old notice lost its start time',
    );
    assert.equal(
      new Date(alert?.endsAt ?? '').getTime(),
      at.getTime(),
      'the alert in an old notice lost its end time',
    );
    assert.equal(byId.get('ntf_firing')?.alerts[0]?.endsAt, null, 'a firing notice has no end');
    assert.equal(byId.get('ntf_firing')?.state, 'sent', 'an old notice already sent is sent again');
    assert.equal(
      byId.get('ntf_orphan')?.state,
      'failed',
      'a notice whose alert is gone still waits to be sent',
    );
    assert.deepEqual(
      byId.get('ntf_orphan')?.alerts,
      [],
      'a notice whose alert is gone claims to hold alerts',
    );
  } finally {
    await database.close();
  }
});
