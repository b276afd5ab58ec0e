import { sql, type Kysely } from 'kysely';

// A tenant's portal settings (docs/api/portal.md): the origins that may frame its portal page and
// the branding the portal and connect pages show. One row per tenant, written whole by each PUT; a
// tenant without one has the defaults (no framing, no branding). portal/ owns it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table portal_settings (
    tenant_id text primary key references tenants (id) on delete cascade,
    frame_ancestors jsonb not null,
    branding_name text,
    branding_logo_url text,
    branding_accent_color text,
    updated_at timestamptz not null
  )`.execute(db);
}
