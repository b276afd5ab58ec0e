import { collectDefaultMetrics, Gauge, type Registry } from 'prom-client';
import type { Database } from '../db/database.js';
import { within } from '../deadline.js';
import type { Metrics } from '../http/metrics.js';
import { readQueue, type QueueFigures } from './monitoring-store.js';

/** A scrape waits this long for the ping and the queue read, then reports the database down. */
const SCRAPE_DB_TIMEOUT_MS = 2_000;

/**
 * The metrics computed when scraped, on this registry (call once per app): prom-client's process
 * defaults (`hubgate_process_*`, `hubgate_nodejs_*`: CPU, memory, event-loop lag, GC…), and gauges
 * read from the database. A scrape never fails because the database does: `hubgate_db_up` is 0,
 * the queue-depth series are absent and the oldest-pending age is 0 until it answers again. The
 * pool gauge has series on PostgreSQL only (the embedded engine has no pool).
 */
export function registerScrapeMetrics(metrics: Metrics, database: Database, options: ScrapeOptions): void {
  collectDefaultMetrics({ register: metrics.registry, prefix: 'hubgate_' });
  registerQueueGauges([metrics.registry], sharedQueueSample(database, options));
  registerPoolGauge([metrics.registry], database);
}

type ScrapeOptions = { now: () => Date; onError?: (error: unknown) => void };

/**
 * One ping and one queue read per scrape, shared by the gauges that need them (prom-client asks
 * every metric at once, so they all join the read in flight).
 */
function sharedQueueSample(database: Database, options: ScrapeOptions): () => Promise<QueueFigures | null> {
  let inFlight: Promise<QueueFigures | null> | undefined;
  return () => {
    inFlight ??= (async () => {
      try {
        const read = database.ping().then(() => readQueue(database.kysely, options.now()));
        return await within(read, SCRAPE_DB_TIMEOUT_MS, 'the database read of a scrape');
      } catch (error) {
        options.onError?.(error);
        return null;
      }
    })().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
}

function registerQueueGauges(registers: Registry[], sample: () => Promise<QueueFigures | null>): void {
  new Gauge({
    name: 'hubgate_db_up',
    help: 'Whether the database answered a ping and the queue read at this scrape (1) or not (0).',
    registers,
    async collect() {
      this.set((await sample()) === null ? 0 : 1);
    },
  });
  new Gauge({
    name: 'hubgate_delivery_queue_depth',
    help: 'Deliveries waiting (pending, retrying) or being sent (delivering), by status.',
    labelNames: ['status'] as const,
    registers,
    async collect() {
      const queue = await sample();
      this.reset();
      if (!queue) return;
      this.set({ status: 'pending' }, queue.pending);
      this.set({ status: 'retrying' }, queue.retrying);
      this.set({ status: 'delivering' }, queue.inFlight);
    },
  });
  new Gauge({
    name: 'hubgate_delivery_queue_oldest_pending_age_seconds',
    help: 'How long the oldest due pending or retrying delivery has waited; 0 when none is due.',
    registers,
    async collect() {
      this.set((await sample())?.oldestPendingAgeSeconds ?? 0);
    },
  });
}

function registerPoolGauge(registers: Registry[], database: Database): void {
  new Gauge({
    name: 'hubgate_db_pool_connections',
    help: 'PostgreSQL connection pool: open (total), idle, and requests waiting for a connection.',
    labelNames: ['state'] as const,
    registers,
    collect() {
      const stats = database.poolStats?.();
      if (!stats) return;
      this.set({ state: 'total' }, stats.total);
      this.set({ state: 'idle' }, stats.idle);
      this.set({ state: 'waiting' }, stats.waiting);
    },
  });
}
