import type { Kysely, Selectable } from 'kysely';
import type { ConnectionsTable, DB } from '../db/schema.js';
import { type Cursor, newestFirstPage } from '../http/pagination.js';
import type { TenantScope } from '../tenants/scope.js';

export type ConnectionRow = Selectable<ConnectionsTable>;

// Every query here starts from the scope's tenant: a connection of another tenant is simply not there.
const ofTenant = (db: Kysely<DB>, scope: TenantScope) =>
  db.selectFrom('connections').where('tenant_id', '=', scope.tenantId);

export async function insertConnection(
  db: Kysely<DB>,
  scope: TenantScope,
  row: ConnectionRow,
): Promise<void> {
  await db
    .insertInto('connections')
    .values({ ...row, tenant_id: scope.tenantId, config: JSON.stringify(row.config) })
    .execute();
}

export function findConnectionRow(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<ConnectionRow | undefined> {
  const query = ofTenant(db, scope).selectAll().where('id', '=', id);
  return (options.forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

export function listConnectionRows(
  db: Kysely<DB>,
  scope: TenantScope,
  limit: number,
  after: Cursor | undefined,
): Promise<ConnectionRow[]> {
  return newestFirstPage(ofTenant(db, scope).selectAll(), limit, after).execute();
}

export async function updateConnectionRow(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
  changes: Partial<Omit<ConnectionRow, 'id' | 'tenant_id' | 'config'>>,
): Promise<ConnectionRow | undefined> {
  return db
    .updateTable('connections')
    .set(changes)
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export interface ConnectorCounts {
  active: number;
  disabled: number;
  awaitingCredentials: number;
}

/** Per connector key: active, disabled, and active without credentials (zeros for a connector unused). */
export async function countConnectionsByConnector(
  db: Kysely<DB>,
  scope: TenantScope,
): Promise<(connectorKey: string) => ConnectorCounts> {
  const rows = await ofTenant(db, scope)
    .select((eb) => [
      'connector_key',
      eb.fn.countAll<string>().filterWhere('status', '=', 'active').as('active'),
      eb.fn.countAll<string>().filterWhere('status', '=', 'disabled').as('disabled'),
      eb.fn
        .countAll<string>()
        .filterWhere((w) => w.and([w('status', '=', 'active'), w('credentials_sealed', 'is', null)]))
        .as('awaiting'),
    ])
    .groupBy('connector_key')
    .execute();
  const counts = new Map(
    rows.map((r) => [
      r.connector_key,
      { active: Number(r.active), disabled: Number(r.disabled), awaitingCredentials: Number(r.awaiting) },
    ]),
  );
  return (connectorKey) => counts.get(connectorKey) ?? { active: 0, disabled: 0, awaitingCredentials: 0 };
}
