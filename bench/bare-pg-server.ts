import Fastify from 'fastify';
import pg from 'pg';

/**
 * The reference for (c) of the access benchmark: a bare Fastify 5 route that runs the one statement
 * hubgate's GET /api/v1/integrations/connections runs per request for a first page of 20 (the text
 * listConnectionRows in src/connections/store.ts sends for a scope that sees every connection: the
 * tenant's connections joined with their OAuth2 authorization, newest first, timestamps written by
 * PostgreSQL, 21 rows so the answer knows whether a next page exists), for the tenant
 * BARE_TENANT_ID, on a pg.Pool as large as hubgate's (src/db/database.ts), and answers the same JSON,
 * byte for byte (bench/access.ts compares them). What hubgate adds on top is its own work: the
 * credential check (a cached lookup), the gate, the access log. Keep this in step with the store:
 * the statement and the answer's fields both grew since the benchmark was written (pausing, then
 * OAuth2 authorizations), and the comparison was not like for like until they were copied again.
 */
const ISO_FORMAT = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const LIST_SQL = `
    select id, connector_key, display_name, connections.status, config, paused_reason,
      to_char(created_at at time zone 'UTC', ${ISO_FORMAT}) as created_at,
      to_char(revoked_at at time zone 'UTC', ${ISO_FORMAT}) as revoked_at,
      to_char(paused_at at time zone 'UTC', ${ISO_FORMAT}) as paused_at,
      credentials_sealed is not null as credentials_bound,
      a.status as authorization_status, a.scopes as authorization_scopes,
      to_char(a.expires_at at time zone 'UTC', ${ISO_FORMAT}) as authorization_expires_at
    from connections
    left join oauth_authorizations a on a.connection_id = connections.id
    where connections.tenant_id = $1 and true
    order by connections.created_at desc, connections.id desc
    limit $2`;
const PAGE = 20;

const tenantId = process.env.BARE_TENANT_ID;
if (!tenantId) throw new Error('BARE_TENANT_ID is required');
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.BARE_POOL_SIZE ?? 20),
});

interface Row {
  id: string;
  connector_key: string;
  display_name: string;
  status: 'active' | 'disabled';
  config: Record<string, unknown>;
  paused_reason: string | null;
  created_at: string;
  revoked_at: string | null;
  paused_at: string | null;
  credentials_bound: boolean;
  authorization_status: string | null;
  authorization_scopes: string[] | null;
  authorization_expires_at: string | null;
}

const app = Fastify({ logger: false });
app.get('/connections', async () => {
  const { rows } = await pool.query<Row>(LIST_SQL, [tenantId, PAGE + 1]);
  const page = rows.slice(0, PAGE);
  const last = page[page.length - 1];
  return {
    data: page.map((row) => ({
      id: row.id,
      connectorKey: row.connector_key,
      displayName: row.display_name,
      status: row.status,
      config: row.config,
      credentialsBound: row.credentials_bound,
      deliveryEnabled: row.status === 'active' && row.credentials_bound,
      createdAt: row.created_at,
      revokedAt: row.revoked_at,
      pausedAt: row.paused_at,
      pausedReason: row.paused_reason,
      authorization: row.authorization_status && {
        status: row.authorization_status,
        scopes: row.authorization_scopes ?? [],
        expiresAt: row.authorization_expires_at,
      },
    })),
    // hubgate signs its cursors (decision 0066), which this reference cannot: the benchmark's tenant
    // has exactly one page, so both answer null, and a next page would differ in its cursor only.
    nextCursor:
      rows.length > PAGE && last
        ? Buffer.from(JSON.stringify([last.created_at, last.id])).toString('base64url')
        : null,
  };
});
app.get('/healthz', async () => ({ status: 'ok' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
