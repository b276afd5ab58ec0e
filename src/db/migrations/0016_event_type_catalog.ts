import { sql, type Kysely } from 'kysely';

// The event-type catalog (docs/api/events.md): a tenant's named types, each with an optional JSON
// Schema for `data` and a deprecation flag. Keyed by (tenant, name): the name is the identity the API
// and publishers use, and a publish reads its type by that key. `updated_at` is what every process's
// cache of compiled validators is keyed by, so a change made anywhere is seen at the next publish.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table event_types (
    tenant_id text not null references tenants (id) on delete cascade,
    name text not null,
    description text,
    schema jsonb,
    deprecated boolean not null default false,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    primary key (tenant_id, name)
  )`.execute(db);
}
