import type { Kysely, Selectable } from 'kysely';
import type { DB, PlatformKeysTable } from '../db/schema.js';

export type PlatformKeyRow = Selectable<PlatformKeysTable>;

export async function insertPlatformKey(db: Kysely<DB>, row: PlatformKeyRow): Promise<void> {
  await db.insertInto('platform_keys').values(row).execute();
}

export function listPlatformKeyRows(db: Kysely<DB>): Promise<PlatformKeyRow[]> {
  return db
    .selectFrom('platform_keys')
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export function findPlatformKeyByHash(
  db: Kysely<DB>,
  secretHash: string,
): Promise<PlatformKeyRow | undefined> {
  return db.selectFrom('platform_keys').selectAll().where('secret_hash', '=', secretHash).executeTakeFirst();
}

/** Sets revoked_at once; returns the row, or undefined when there is no such key. */
export async function revokePlatformKeyRow(
  db: Kysely<DB>,
  id: string,
  at: Date,
): Promise<PlatformKeyRow | undefined> {
  await db
    .updateTable('platform_keys')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
  return db.selectFrom('platform_keys').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function touchPlatformKey(db: Kysely<DB>, id: string, at: Date): Promise<void> {
  await db.updateTable('platform_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}
