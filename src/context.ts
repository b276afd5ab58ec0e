import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Keyring } from './crypto/keyring.js';
import type { Database } from './db/database.js';
import type { DB } from './db/schema.js';
import type { Metrics } from './http/metrics.js';
import type { Tracing } from './telemetry/types.js';

/** What a tenant's usage counts (docs/api/usage.md): one column of `usage_hourly` each. */
export type UsageKind =
  'eventsPublished' | 'delivered' | 'failed' | 'skipped' | 'attempts' | 'proxyCalls' | 'ingested';

/**
 * The usage meter (usage/meter.ts): counts kept in memory per tenant, hour and kind, added to the
 * database once a second. Declared here, below usage/, so that every domain can count through the context.
 */
export interface UsageMeter {
  /** Adds `n` to the tenant's `kind` in the UTC hour holding `at`: a map update, never a write. Call it once the write it counts committed. */
  count(tenantId: string, kind: UsageKind, n: number, at: Date): void;
  /** Writes what was counted so far now rather than at the next flush; resolves once written or failed. */
  flush(): Promise<void>;
}

/** What every domain's routes and logic are given by buildApp: no globals, nothing at import time. */
export interface AppContext {
  config: Config;
  database: Database;
  db: Kysely<DB>;
  keyring: Keyring;
  log: Logger;
  /** Prometheus metrics of this process (GET /metrics). */
  metrics: Metrics;
  now(): Date;
  /** Tenant quotas: their cache and checks (src/quotas/book.ts). */
  quotas: QuotaBook;
  /** The tenant usage meter (docs/api/usage.md). */
  usage: UsageMeter;
  /** OpenTelemetry tracing (docs/operators/telemetry.md); absent when it is off. */
  tracing?: Tracing;
}

/** What a publish reserved of its tenant's day; the events not written are given back. */
export interface EventReservation {
  giveBack(events: number): Promise<void>;
}

/**
 * Tenant quotas as the domains below quotas/ meet them (docs/api/quotas.md): built once per process
 * (src/quotas/book.ts), each tenant's quotas cached for about a second.
 */
export interface QuotaBook {
  /** The tenant's requests-per-minute quota as this process knows it (null: none); a miss starts a read. */
  requestsPerMinute(tenantId: string): number | null | Promise<number | null>;
  /** Reserves `events` of the tenant's UTC day before they are written; `429 quota_exceeded` if they do not fit. */
  reserveEvents(tenantId: string, events: number, at: Date): Promise<EventReservation>;
  /** In a connection create's transaction: `409 quota_exceeded` if the tenant has its connections. */
  holdConnectionPlace(trx: Kysely<DB>, tenantId: string): Promise<void>;
  /** Drops what this process cached of the tenant's quotas (they were just set). */
  forget(tenantId: string): void;
}
