import type { Kysely } from 'kysely';
import type { EventReservation, QuotaBook } from '../context.js';
import type { DB } from '../db/schema.js';
import { HttpProblem } from '../http/problem.js';
import {
  countLiveConnections,
  findQuotaRow,
  lockQuotaRow,
  releaseOnDay,
  reserveOnDay,
  seedDay,
  type QuotaRow,
} from './store.js';

/**
 * How long a process trusts what it read of a tenant's quotas. The process that sets them forgets
 * them at once; the others follow within this (docs/api/quotas.md, docs/decisions/0090-tenant-quotas.md).
 */
export const QUOTA_CACHE_MS = 1_000;
/**
 * How long a process refuses a tenant whose day of events it found spent without asking again: events
 * given back meanwhile (a write that failed, in any process) become publishable after at most this.
 */
const SPENT_MS = 1_000;

const DAY_MS = 86_400_000;
const NO_QUOTAS: QuotaRow = {
  events_per_day: null,
  connections: null,
  requests_per_minute: null,
  retention_days: null,
};
const NOTHING_RESERVED: EventReservation = { giveBack: async () => {} };

interface Entry {
  quotas: QuotaRow | undefined;
  loadedAt: number;
  loading?: Promise<QuotaRow>;
}

/** The UTC day of `at` (`YYYY-MM-DD`), its start, and the whole seconds until the next one begins. */
export function utcDayOf(at: Date): { day: string; start: Date; secondsLeft: number } {
  const start = new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
  const secondsLeft = Math.max(1, Math.ceil((start.getTime() + DAY_MS - at.getTime()) / 1000));
  return { day: start.toISOString().slice(0, 10), start, secondsLeft };
}

/**
 * The quota book of one process (`ctx.quotas`): each tenant's quotas, cached for QUOTA_CACHE_MS, and the
 * checks that enforce them. A tenant without an `eventsPerDay` quota pays a cache lookup per publish; one
 * with it one statement, which reserves the events on the tenant's row for the UTC day.
 */
export function createQuotaBook(
  db: Kysely<DB>,
  options: { ttlMs?: number; clock?: () => number; onError?: (error: unknown) => void } = {},
): QuotaBook & { quotasOf(tenantId: string): Promise<QuotaRow> } {
  const clock = options.clock ?? (() => performance.now());
  const cache = createQuotaCache(db, options.ttlMs ?? QUOTA_CACHE_MS, clock);
  /** Tenants whose day's events were found spent, until when this process trusts that without asking. */
  const spent = new Map<string, { day: string; limit: number; until: number }>();
  return {
    quotasOf: cache.quotasOf,
    requestsPerMinute(tenantId) {
      const { known, fresh } = cache.peek(tenantId);
      if (fresh && known) return known.requests_per_minute;
      const read = cache.quotasOf(tenantId).then(
        (quotas) => quotas.requests_per_minute,
        (error: unknown) => {
          // The request goes on unbounded by its tenant and answers for itself (503 where it needs
          // the database); the next request asks again.
          options.onError?.(error);
          return null;
        },
      );
      // Nothing known yet (this process's first request of the tenant, or just after its own PUT):
      // the request waits for the read, so no request passes unlimited. Otherwise what was known
      // answers while it is read again.
      return known ? known.requests_per_minute : read;
    },
    async reserveEvents(tenantId, n, at) {
      if (n <= 0) return NOTHING_RESERVED;
      const limit = (await cache.quotasOf(tenantId)).events_per_day;
      if (limit === null) return NOTHING_RESERVED;
      const { day, secondsLeft } = utcDayOf(at);
      const known = spent.get(tenantId);
      // A tenant refused for the day is refused from memory for a second: a flood of publishes past
      // the quota costs no statement each (what one tenant must not take from the others).
      if (known?.day === day && known.limit === limit && clock() < known.until) {
        throw dayQuotaProblem(n, limit, secondsLeft);
      }
      try {
        return await reserveEvents(db, tenantId, n, limit, at);
      } catch (error) {
        // Only a single event's refusal says nothing is left; a batch's may leave room for fewer.
        if (n === 1 && error instanceof HttpProblem && error.code === 'quota_exceeded') {
          spent.set(tenantId, { day, limit, until: clock() + SPENT_MS });
        }
        throw error;
      }
    },
    holdConnectionPlace: (trx, tenantId) => holdConnectionPlace(trx, tenantId),
    forget: (tenantId) => {
      cache.forget(tenantId);
      spent.delete(tenantId);
    },
  };
}

/** Each tenant's quota row as last read, trusted for `ttlMs`; one read at a time per tenant. */
function createQuotaCache(db: Kysely<DB>, ttlMs: number, clock: () => number) {
  const cache = new Map<string, Entry>();
  const isFresh = (entry: Entry | undefined): entry is Entry & { quotas: QuotaRow } =>
    entry?.quotas !== undefined && clock() - entry.loadedAt < ttlMs;

  function load(tenantId: string): Promise<QuotaRow> {
    const entry = cache.get(tenantId) ?? { quotas: undefined, loadedAt: 0 };
    if (entry.loading) return entry.loading;
    const loading = findQuotaRow(db, tenantId)
      .then((row) => {
        const quotas = row ?? NO_QUOTAS;
        // Forgotten meanwhile (a PUT in this process): the answer may predate it, so it is not kept.
        if (cache.get(tenantId) === entry) cache.set(tenantId, { quotas, loadedAt: clock() });
        return quotas;
      })
      .finally(() => {
        delete entry.loading;
      });
    entry.loading = loading;
    cache.set(tenantId, entry);
    return loading;
  }

  return {
    async quotasOf(tenantId: string): Promise<QuotaRow> {
      const entry = cache.get(tenantId);
      return isFresh(entry) ? entry.quotas : load(tenantId);
    },
    peek(tenantId: string): { known: QuotaRow | undefined; fresh: boolean } {
      const entry = cache.get(tenantId);
      return { known: entry?.quotas, fresh: isFresh(entry) };
    },
    /**
     * Read again at the next use, which waits for the read (this process's own PUT applies to its very
     * next request); a read in flight is not kept.
     */
    forget(tenantId: string): void {
      cache.set(tenantId, { quotas: undefined, loadedAt: -Infinity });
    },
  };
}

/** Reserves `n` of the tenant's events of the UTC day of `at` under `limit`, or throws 429 with Retry-After. */
async function reserveEvents(
  db: Kysely<DB>,
  tenantId: string,
  n: number,
  limit: number,
  at: Date,
): Promise<EventReservation> {
  const { day, start, secondsLeft } = utcDayOf(at);
  for (let attempt = 0; attempt < 2; attempt++) {
    const { reserved, present } = await reserveOnDay(db, tenantId, day, n, limit);
    if (reserved)
      return { giveBack: (k) => (k > 0 ? releaseOnDay(db, tenantId, day, k) : Promise.resolve()) };
    if (present) break;
    // The day's first reservation, in any process: seed the row with the day's events, then retry.
    await seedDay(db, tenantId, day, start);
  }
  throw dayQuotaProblem(n, limit, secondsLeft);
}

/** 429 quota_exceeded for `n` events over the day's `limit`, with Retry-After to the next UTC day. */
function dayQuotaProblem(n: number, limit: number, secondsLeft: number): HttpProblem {
  return new HttpProblem(
    'quota_exceeded',
    n === 1
      ? `The tenant has published its ${limit} events of today (UTC); more can be published from the next UTC day.`
      : `These ${n} events would take the tenant over its ${limit} events of today (UTC); none was published.`,
    {
      headers: { 'retry-after': String(secondsLeft) },
      // RateLimit-Policy names the day's quota (http/rate-limit-fields.ts).
      limit: { policy: 'events-per-day', quota: limit, windowSeconds: 86_400 },
    },
  );
}

/** In a connection create's transaction: locked, so two creates of one tenant take turns on the count. */
async function holdConnectionPlace(trx: Kysely<DB>, tenantId: string): Promise<void> {
  const row = await lockQuotaRow(trx, tenantId);
  if (row?.connections == null) return;
  if ((await countLiveConnections(trx, tenantId)) >= row.connections) {
    throw new HttpProblem(
      'quota_exceeded',
      `The tenant has its ${row.connections} connections; revoke one to create another.`,
      { status: 409 },
    );
  }
}
