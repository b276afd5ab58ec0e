import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { migrateBefore } from '../helpers/migrations.js';

// 0020_delivery_publish_order on a database that already holds deliveries
// (docs/decisions/0064-queued-deliveries-keep-their-order-and-survive-a-new-host.md): those that may
// still be sent again are numbered in the order they had (created_at, id), delivered and cancelled
// ones are left as they are, and a row inserted afterwards without a number (a process of the
// previous release) is numbered after them.
test('deliveries written before the publish order sequence are numbered in their old order', async () => {
  const database = await openDatabase({ kind: 'memory' });
  try {
    const db = database.kysely;
    await migrateBefore(db, '0020');

    const at = new Date('2026-12-01T10:00:00.000Z');
    const later = new Date(at.getTime() + 1000);
    await sql`insert into tenants (id, name, created_at) values ('ten_1', 't', ${at})`.execute(db);
    await sql`insert into connections (id, tenant_id, connector_key, display_name, status, config, created_at)
      values ('con_1', 'ten_1', 'webhook', 'c', 'active', '{}'::jsonb, ${at})`.execute(db);
    // Listed out of order on purpose: the numbers must follow time, then ID.
    const rows: Array<[string, Date, string]> = [
      ['dlv_c', at, 'failed'],
      ['dlv_z', later, 'skipped'],
      ['dlv_a', at, 'skipped'],
      ['dlv_d', at, 'delivered'],
      ['dlv_b', at, 'pending'],
      ['dlv_e', at, 'cancelled'],
    ];
    for (const [id, createdAt, status] of rows) {
      await sql`insert into deliveries (id, tenant_id, event_id, connection_id, status, created_at, updated_at)
        values (${id}, 'ten_1', 'evt_1', 'con_1', ${status}, ${createdAt}, ${createdAt})`.execute(db);
    }

    const applied = await migrateToLatest(database);
    assert.equal(applied[0], '0020_delivery_publish_order', applied.join());
    await sql`insert into deliveries (id, tenant_id, event_id, connection_id, status, created_at, updated_at)
      values ('dlv_new', 'ten_1', 'evt_2', 'con_1', 'pending', ${at}, ${at})`.execute(db);
    const numbered = await sql<{ id: string; seq: string | number | null }>`
      select id, seq from deliveries order by id`.execute(db);
    const seqOf = new Map(numbered.rows.map((r) => [r.id, r.seq === null ? null : Number(r.seq)]));
    assert.equal(seqOf.get('dlv_d'), null, 'a delivered row was rewritten');
    assert.equal(seqOf.get('dlv_e'), null, 'a cancelled row was rewritten');
    const order = ['dlv_a', 'dlv_b', 'dlv_c', 'dlv_z', 'dlv_new'];
    const seqs = order.map((id) => seqOf.get(id));
    assert.ok(
      seqs.every((s) => typeof s === 'number'),
      `a row that may be sent again has no number: ${JSON.stringify(seqs)}`,
    );
    assert.deepEqual(
      [...seqs].sort((x, y) => x! - y!),
      seqs,
      `the numbers do not follow created_at, id, then the new row: ${JSON.stringify(Object.fromEntries(seqOf))}`,
    );
  } finally {
    await database.close();
  }
});
