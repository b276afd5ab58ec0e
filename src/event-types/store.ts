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

/**
 * The types several publishes name, each of its own tenant (a list of scoped asks, read in one
 * statement): every row answers the ask of its tenant only.
 */
export async function findEventTypesOfTenants(
  db: Kysely<DB>,
  asks: ReadonlyArray<{ scope: TenantScope; names: readonly string[] }>,
): Promise<EventTypeRow[]> {
  const tenants = asks.flatMap((ask) => ask.names.map(() => ask.scope.tenantId));
  const names = asks.flatMap((ask) => ask.names);
  if (names.length === 0) return [];
  const result = await sql<EventTypeRow>`
    select t.* from event_types t
    join (select distinct * from unnest(${tenants}::text[], ${names}::text[])) as wanted(tenant_id, name)
      on t.tenant_id = wanted.tenant_id and t.name = wanted.name`.execute(db);
  return result.rows;
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
