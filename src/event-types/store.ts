import { sql, type Kysely, type Selectable } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import type { DB, EventTypesTable } from '../db/schema.js';

export type EventTypeRow = Selectable<EventTypesTable>;

// SQL null for no schema, not the JSON value `null`: `schema is null` means what it says.
const jsonOrNull = (schema: Record<string, unknown> | null) =>
  schema === null ? null : JSON.stringify(schema);

// Every query here starts from the scope's tenant: another tenant's types are simply not there.
const ofTenant = (db: Kysely<DB>, scope: TenantScope) =>
  db.selectFrom('event_types').where('tenant_id', '=', scope.tenantId);

/** Inserts the type unless the tenant has one of that name; whether it did. */
export async function insertEventType(
  db: Kysely<DB>,
  scope: TenantScope,
  row: EventTypeRow,
): Promise<boolean> {
  const inserted = await db
    .insertInto('event_types')
    .values({ ...row, tenant_id: scope.tenantId, schema: jsonOrNull(row.schema) })
    .onConflict((conflict) => conflict.columns(['tenant_id', 'name']).doNothing())
    .executeTakeFirst();
  return (inserted.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

export function findEventType(
  db: Kysely<DB>,
  scope: TenantScope,
  name: string,
  options: { forUpdate?: boolean } = {},
): Promise<EventTypeRow | undefined> {
  const query = ofTenant(db, scope).selectAll().where('name', '=', name);
  return (options.forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

/** The types of these names the tenant registered (the publish path: one query for a whole batch). */
export function findEventTypes(
  db: Kysely<DB>,
  scope: TenantScope,
  names: readonly string[],
): Promise<EventTypeRow[]> {
  if (names.length === 0) return Promise.resolve([]);
  return ofTenant(db, scope).selectAll().where('name', 'in', names).execute();
}

/** One page by name, ascending: the names after `after`, one more than `limit` (a next page follows). */
export function listEventTypeRows(
  db: Kysely<DB>,
  scope: TenantScope,
  limit: number,
  after: string | undefined,
): Promise<EventTypeRow[]> {
  // `collate "C"`: byte order, the same on PGlite and PostgreSQL whatever the database's locale (a
  // locale's order may skip `.`, `-` and `_`), and the order a client sorting the names would expect.
  const byName = sql<string>`name collate "C"`;
  let query = ofTenant(db, scope).selectAll();
  if (after !== undefined) query = query.where(byName, '>', after);
  return query
    .orderBy(byName, 'asc')
    .limit(limit + 1)
    .execute();
}

export async function updateEventType(db: Kysely<DB>, scope: TenantScope, row: EventTypeRow): Promise<void> {
  await db
    .updateTable('event_types')
    .set({
      description: row.description,
      schema: jsonOrNull(row.schema),
      deprecated: row.deprecated,
      updated_at: row.updated_at,
    })
    .where('tenant_id', '=', scope.tenantId)
    .where('name', '=', row.name)
    .execute();
}

export async function deleteEventTypeRow(db: Kysely<DB>, scope: TenantScope, name: string): Promise<void> {
  await db
    .deleteFrom('event_types')
    .where('tenant_id', '=', scope.tenantId)
    .where('name', '=', name)
    .execute();
}
