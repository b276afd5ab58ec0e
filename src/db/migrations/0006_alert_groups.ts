import { sql, type Kysely } from 'kysely';

// Notices are grouped (docs/api/limits.md): one per channel and `(alertname, tenantId)` group, holding the
// alerts it tells of, instead of one per alert (issue: hardening).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('alert_notifications')
    .addColumn('group_key', 'text')
    .addColumn('alerts', 'jsonb')
    .addColumn('truncated_alerts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // A notice written before this one told of one alert: the same notice, as a group of one.
  await sql`
    update alert_notifications n set
      group_key = coalesce(a.labels->>'alertname', '') || '/' || coalesce(a.labels->>'tenantId', ''),
      alerts = jsonb_build_array(jsonb_build_object(
        'fingerprint', a.fingerprint, 'status', n.status, 'labels', a.labels,
        'annotations', a.annotations, 'startsAt', a.starts_at,
        'endsAt', case when n.status = 'resolved' then a.ends_at end))
    from alerts a where a.fingerprint = n.fingerprint`.execute(db);
  // Its alert purged since: nothing left to tell.
  await sql`
    update alert_notifications set group_key = '/', alerts = '[]'::jsonb,
      state = case when state = 'pending' then 'failed' else state end,
      next_attempt_at = case when state = 'pending' then null else next_attempt_at end
    where group_key is null`.execute(db);
  await db.schema
    .alterTable('alert_notifications')
    .alterColumn('group_key', (c) => c.setNotNull())
    .alterColumn('alerts', (c) => c.setNotNull())
    .dropColumn('fingerprint')
    .execute();
  // A new notice supersedes the one of its group still waiting for the same channel.
  await db.schema
    .createIndex('alert_notifications_group_idx')
    .on('alert_notifications')
    .columns(['group_key', 'channel_id'])
    .where(sql.ref('state'), '=', 'pending')
    .execute();
}
