import type { Kysely, Selectable } from 'kysely';
import type { AlertChannelsTable, ChannelAttempt, DB } from '../../db/schema.js';
import { newestFirstPage, type Cursor } from '../../http/pagination.js';

export type ChannelRow = Selectable<AlertChannelsTable>;

export async function insertChannel(db: Kysely<DB>, row: Omit<ChannelRow, 'last_attempt'>): Promise<void> {
  await db
    .insertInto('alert_channels')
    .values({ ...row, config: JSON.stringify(row.config), secret_fields: JSON.stringify(row.secret_fields) })
    .execute();
}

/** Remembers a channel's latest attempt; a channel deleted meanwhile is simply not there. */
export async function recordChannelAttempt(
  db: Kysely<DB>,
  id: string,
  attempt: ChannelAttempt,
): Promise<void> {
  await db
    .updateTable('alert_channels')
    .set({ last_attempt: JSON.stringify(attempt) })
    .where('id', '=', id)
    .execute();
}

export function findChannel(
  db: Kysely<DB>,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<ChannelRow | undefined> {
  const query = db.selectFrom('alert_channels').selectAll().where('id', '=', id);
  return (options.forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

export function listChannelRows(
  db: Kysely<DB>,
  limit: number,
  after: Cursor | undefined,
): Promise<ChannelRow[]> {
  return newestFirstPage(db.selectFrom('alert_channels').selectAll(), limit, after).execute();
}

/** Every channel, for the alert engine (a platform has a handful, not thousands). */
export function allChannelRows(db: Kysely<DB>): Promise<ChannelRow[]> {
  return db.selectFrom('alert_channels').selectAll().orderBy('created_at').execute();
}

export async function updateChannel(db: Kysely<DB>, row: Omit<ChannelRow, 'last_attempt'>): Promise<void> {
  await db
    .updateTable('alert_channels')
    .set({
      name: row.name,
      enabled: row.enabled,
      config: JSON.stringify(row.config),
      secrets_sealed: row.secrets_sealed,
      secret_fields: JSON.stringify(row.secret_fields),
      updated_at: row.updated_at,
    })
    .where('id', '=', row.id)
    .execute();
}

export async function deleteChannelRow(db: Kysely<DB>, id: string): Promise<void> {
  await db.deleteFrom('alert_channels').where('id', '=', id).execute();
}
