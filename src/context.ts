import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Keyring } from './crypto/keyring.js';
import type { Database } from './db/database.js';
import type { DB } from './db/schema.js';
import type { Metrics } from './http/metrics.js';
import type { Tracing } from './telemetry/types.js';

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
  /** OpenTelemetry tracing (docs/operators/telemetry.md); absent when it is off. */
  tracing?: Tracing;
}
