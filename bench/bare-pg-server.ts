import Fastify from 'fastify';
import pg from 'pg';

/**
 * The reference for (c) of the access benchmark: a bare Fastify 5 route that runs the one statement
 * hubgate's GET /api/v1/integrations/connections runs per request for a first page of 20 (Kysely's
 * text for listConnectionRows in src/connections/store.ts: the tenant's connections, newest first,
 * 21 rows so the answer knows whether a next page exists), for the tenant BARE_TENANT_ID, on a
 * pg.Pool as large as hubgate's (src/db/database.ts), and answers the same JSON shape. What hubgate
 * adds on top is its own work: the key check (a cached lookup), the gate, the access log.
 */
const LIST_SQL =
  'select * from "connections" where "tenant_id" = $1 order by "created_at" desc, "id" desc limit $2';
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
  credentials_sealed: unknown;
  created_at: Date;
  revoked_at: Date | null;
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
      credentialsBound: row.credentials_sealed !== null,
      deliveryEnabled: row.status === 'active' && row.credentials_sealed !== null,
      createdAt: new Date(row.created_at).toISOString(),
      revokedAt: row.revoked_at ? new Date(row.revoked_at).toISOString() : null,
    })),
    nextCursor:
      rows.length > PAGE && last
        ? Buffer.from(JSON.stringify([new Date(last.created_at).toISOString(), last.id])).toString(
            'base64url',
          )
        : null,
  };
});
app.get('/healthz', async () => ({ status: 'ok' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
