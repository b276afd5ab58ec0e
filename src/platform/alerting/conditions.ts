import { sql, type Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { DB } from '../../db/schema.js';
import { quoted } from './quote.js';

/** A condition that holds now: the alert it raises, before routing (docs/operators/alerting.md labels). */
export interface Condition {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

// A failed delivery stops counting after a day, or when a later one to the same connection succeeds.
const DELIVERY_FAILED_LOOKBACK_MS = 24 * 60 * 60 * 1000;

/**
 * DeliveryFailed, one per connection: a delivery to it reached `failed` in the last 24 hours and no
 * later delivery to it succeeded (nor was it revoked). It resolves when one does. A paused connection
 * keeps it: a 410 raises it (docs/api/events.md) as well as ConnectionPaused (docs/api/connections.md).
 */
async function deliveryFailed(db: Kysely<DB>, now: Date): Promise<Condition[]> {
  const since = new Date(now.getTime() - DELIVERY_FAILED_LOOKBACK_MS);
  const rows = await sql<{
    tenant_id: string;
    connection_id: string;
    connector_key: string;
    display_name: string;
    failed: string | number;
    last_delivery_id: string;
  }>`
    select d.tenant_id, d.connection_id, c.connector_key, c.display_name, count(*) as failed,
      (array_agg(d.id order by d.updated_at desc))[1] as last_delivery_id
    from deliveries d
    join connections c on c.id = d.connection_id and c.status in ('active', 'paused')
    where d.status = 'failed' and d.updated_at > ${since}
      and not exists (
        select 1 from deliveries ok
        where ok.connection_id = d.connection_id and ok.status = 'delivered' and ok.delivered_at > d.updated_at)
    group by d.tenant_id, d.connection_id, c.connector_key, c.display_name`.execute(db);
  return rows.rows.map((row) => ({
    labels: {
      alertname: 'DeliveryFailed',
      severity: 'warning',
      tenantId: row.tenant_id,
      connectionId: row.connection_id,
    },
    annotations: {
      // The one tenant-written text in an alert: quoted, so it cannot pass for a line of ours.
      summary: `Deliveries to connection ${quoted(row.display_name)} failed for good`,
      description:
        `${row.failed} deliveries to this ${row.connector_key} connection reached failed after every ` +
        `retry; the latest is ${row.last_delivery_id}. It resolves when a delivery to it succeeds.`,
    },
  }));
}

const PAUSE_WORDS: Record<string, string> = {
  failing: 'its deliveries kept failing',
  gone: 'its receiver answered 410 Gone',
};

/**
 * ConnectionPaused (docs/api/connections.md), one per connection that paused itself (reason `failing` or
 * `gone`; a pause by hand is the tenant's own doing): it fires while the connection stays paused and
 * resolves when it is resumed or revoked.
 */
async function connectionPaused(db: Kysely<DB>): Promise<Condition[]> {
  const rows = await db
    .selectFrom('connections')
    .select(['id', 'tenant_id', 'connector_key', 'display_name', 'paused_reason', 'paused_at'])
    .where('status', '=', 'paused')
    .where('paused_reason', 'in', ['failing', 'gone'])
    .execute();
  return rows.map((row) => {
    const reason = row.paused_reason ?? 'failing';
    return {
      labels: {
        alertname: 'ConnectionPaused',
        severity: 'warning',
        tenantId: row.tenant_id,
        connectionId: row.id,
        reason,
      },
      annotations: {
        summary: `Connection ${quoted(row.display_name)} was paused because ${PAUSE_WORDS[reason] ?? reason}`,
        description:
          `This ${row.connector_key} connection paused itself at ${row.paused_at ? new Date(row.paused_at).toISOString() : 'an unknown time'}; ` +
          'nothing is sent to it and new events are skipped until the tenant resumes it (and replays what was skipped).',
      },
    };
  });
}

/**
 * ConnectionAuthorizationExpired (docs/api/oauth.md), one per OAuth2 connection whose provider refused
 * to refresh its tokens (`invalid_grant`): it fires until someone authorizes it again or revokes it.
 */
async function authorizationExpired(db: Kysely<DB>): Promise<Condition[]> {
  // oauth/'s table of authorizations, read with the connection each belongs to.
  const rows = await db
    .selectFrom('oauth_authorizations as a')
    .innerJoin('connections as c', 'c.id', 'a.connection_id')
    .select(['c.id', 'c.tenant_id', 'c.connector_key', 'c.display_name'])
    .where('a.status', '=', 'expired')
    .where('c.status', 'in', ['active', 'paused'])
    .execute();
  return rows.map((row) => ({
    labels: {
      alertname: 'ConnectionAuthorizationExpired',
      severity: 'warning',
      tenantId: row.tenant_id,
      connectionId: row.id,
    },
    annotations: {
      summary: `Connection ${quoted(row.display_name)} must be authorized again`,
      description:
        `The provider of this ${row.connector_key} connection refused to refresh its access; calls through it ` +
        'fail until someone in the tenant authorizes it again.',
    },
  }));
}

/** DeliveryFailureRateHigh, per tenant: the share of failed attempts over the window, above the threshold. */
async function failureRateHigh(db: Kysely<DB>, now: Date, alerts: Config['alerts']): Promise<Condition[]> {
  const since = new Date(now.getTime() - alerts.failureRateWindowSeconds * 1000);
  const rows = await sql<{ tenant_id: string; total: string | number; failed: string | number }>`
    select d.tenant_id, count(*) as total, count(*) filter (where a.error is not null) as failed
    from delivery_attempts a
    join deliveries d on d.id = a.delivery_id and d.created_at = a.delivery_created_at
    where a.started_at > ${since}
    group by d.tenant_id`.execute(db);
  return rows.rows
    .map((row) => ({ tenantId: row.tenant_id, total: Number(row.total), failed: Number(row.failed) }))
    .filter(
      (r) => r.total >= alerts.failureRateMinDeliveries && r.failed / r.total > alerts.failureRateThreshold,
    )
    .map((r) => ({
      labels: { alertname: 'DeliveryFailureRateHigh', severity: 'warning', tenantId: r.tenantId },
      annotations: {
        summary: `${Math.round((100 * r.failed) / r.total)} % of delivery attempts failed`,
        description:
          `${r.failed} of ${r.total} delivery attempts of this tenant failed in the last ` +
          `${alerts.failureRateWindowSeconds} s (threshold ${Math.round(alerts.failureRateThreshold * 100)} %).`,
      },
    }));
}

/** QueueBacklogHigh: more deliveries due than the threshold, platform-wide. */
async function queueBacklogHigh(db: Kysely<DB>, now: Date, alerts: Config['alerts']): Promise<Condition[]> {
  const row = await sql<{ due: string | number; oldest: Date | string | null }>`
    select count(*) as due, min(next_attempt_at) as oldest from deliveries
    where status in ('pending', 'retrying') and next_attempt_at <= ${now}`.execute(db);
  const due = Number(row.rows[0]?.due ?? 0);
  if (due <= alerts.queueBacklogThreshold) return [];
  const oldest = row.rows[0]?.oldest;
  const age = oldest ? Math.round((now.getTime() - new Date(oldest).getTime()) / 1000) : 0;
  return [
    {
      labels: { alertname: 'QueueBacklogHigh', severity: 'warning' },
      annotations: {
        summary: `${due} deliveries are waiting to be sent`,
        description:
          `${due} deliveries are due (threshold ${alerts.queueBacklogThreshold}); the oldest has waited ` +
          `${age} s. Add workers or look for a slow receiver.`,
      },
    },
  ];
}

/** Every condition that holds now, read from the database (DatabaseUnavailable is the engine's own). */
/** The percentage of a set quota TenantQuotaNearlyUsed fires from (docs/operators/alerting.md). */
export const QUOTA_NEARLY_USED_PERCENT = 80;

/**
 * TenantQuotaNearlyUsed (docs/api/quotas.md), one per tenant and quota (`eventsPerDay`, `connections`):
 * fires while the tenant uses 80 % or more of a quota the platform set, resolves below. Today's events
 * are those reserved on the tenant's row for the UTC day (quotas/), its connections those not revoked.
 * Read by SQL, as the other conditions read delivery's and connections' tables.
 */
async function tenantQuotaNearlyUsed(db: Kysely<DB>, now: Date): Promise<Condition[]> {
  const day = now.toISOString().slice(0, 10);
  const { rows } = await sql<{
    tenant_id: string;
    quota: string;
    used: number | string;
    quota_limit: number;
  }>`
    select q.tenant_id, 'eventsPerDay' as quota, d.events as used, q.events_per_day as quota_limit
    from tenant_quotas q
    join tenant_event_days d on d.tenant_id = q.tenant_id and d.day = ${day}::date
    where q.events_per_day is not null and d.events::bigint * 100 >= q.events_per_day::bigint * ${QUOTA_NEARLY_USED_PERCENT}
    union all
    select q.tenant_id, 'connections' as quota, count(c.id) as used, q.connections as quota_limit
    from tenant_quotas q
    join connections c on c.tenant_id = q.tenant_id and c.status <> 'disabled'
    where q.connections is not null
    group by q.tenant_id, q.connections
    having count(c.id) * 100 >= q.connections::bigint * ${QUOTA_NEARLY_USED_PERCENT}`.execute(db);
  return rows.map((row) => ({
    labels: {
      alertname: 'TenantQuotaNearlyUsed',
      severity: 'warning',
      tenantId: row.tenant_id,
      quota: row.quota,
    },
    annotations: {
      summary: `A tenant has used ${Math.floor((Number(row.used) / row.quota_limit) * 100)} % of its ${row.quota} quota`,
      description:
        row.quota === 'eventsPerDay'
          ? `${Number(row.used)} of its ${row.quota_limit} events of today (UTC) are used; past them its publishes answer 429.`
          : `${Number(row.used)} of its ${row.quota_limit} connections are used; past them a create answers 409.`,
    },
  }));
}

export async function evaluateConditions(
  db: Kysely<DB>,
  now: Date,
  alerts: Config['alerts'],
): Promise<Condition[]> {
  const [failed, rate, backlog, paused, expired, quotas] = await Promise.all([
    deliveryFailed(db, now),
    failureRateHigh(db, now, alerts),
    queueBacklogHigh(db, now, alerts),
    connectionPaused(db),
    authorizationExpired(db),
    tenantQuotaNearlyUsed(db, now),
  ]);
  return [...failed, ...rate, ...backlog, ...paused, ...expired, ...quotas];
}

/** Raised by the engine itself when its ping fails; no error text, which may name hosts or users. */
export const DATABASE_UNAVAILABLE: Condition = {
  labels: { alertname: 'DatabaseUnavailable', severity: 'critical' },
  annotations: {
    summary: 'hubgate cannot reach its database',
    description:
      'The database did not answer the health ping; nothing can be published or delivered meanwhile.',
  },
};
