import { performance } from 'node:perf_hooks';
import { within } from '../deadline.js';
import type { Database } from './database.js';

/**
 * One round trip to the database, in milliseconds; throws when it fails or takes longer than
 * `timeoutMs` (a server that is gone can leave a query waiting for a connection far longer).
 */
export async function timedPing(database: Database, timeoutMs: number): Promise<number> {
  const started = performance.now();
  await within(database.ping(), timeoutMs, 'the database ping');
  return performance.now() - started;
}
