import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AuditOrigin } from '../access/audit.js';
import type { TenantScope } from '../access/scope.js';
import type { ConnectionDeps } from '../connections/connections.js';
import type { DB } from '../db/schema.js';
import { HttpProblem } from '../http/problem.js';
import { activeConnections, eventRows, filteredOf } from './fan-out.js';
import { recordFiltered } from './filtered-store.js';
import { answerOf, type PublishedEvent } from './publish-answer.js';
import { IDEMPOTENCY_WINDOW_MS } from './retention.js';
import {
  findIdempotencyKeys,
  insertEventGroup,
  insertIdempotencyKeys,
  type IdempotencyKeyRow,
  type InsertedDelivery,
  type ScopedEvent,
} from './store.js';
import { countPublished } from './usage.js';

// The write of events with an Idempotency-Key (docs/api/events.md): a publish's idempotency,
// fan-out and write phases (publish.ts) in one transaction of their own, apart from the group commit.

/** An event with an Idempotency-Key, its data checked (`payloadOf`). */
export interface KeyedDraft {
  type: string;
  payload: string;
  key: string;
  /** The publish span's `traceparent` (tracing on), stored with the event if this makes one. */
  traceContext?: string | null;
  /** The event's `orderingKey` (docs/api/events.md, Ordering), if any. */
  orderingKey?: string;
}

/** Thrown inside a keyed publish's transaction when a concurrent publish took one of its new keys. */
class KeyTaken extends Error {}

/**
 * Publishes events with idempotency keys together, each answering what it would answer published
 * alone, in the order given (docs/api/events.md): its event, or a `409 conflict` of its own. One
 * transaction: one read of the keys, one of the tenant's connections, one insert of the new keys and
 * one of the events with their deliveries, whatever their number. A key given twice behaves as two
 * requests in that order would: the second answers the first's event, or is a conflict.
 *
 * A concurrent publish may take a new key between the read and the insert. The insert waits for it
 * to commit and leaves that key out; then nothing of this attempt is kept and it runs again, and reads
 * the winner's key as a later request would: the winner's event, or a conflict. Each lost attempt
 * finds at least one more key held on the next, so the attempts are bounded by the keys.
 */
export async function publishKeyed(
  deps: ConnectionDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  drafts: readonly KeyedDraft[],
): Promise<Array<PublishedEvent | HttpProblem>> {
  if (drafts.length === 0) return [];
  const hashes = drafts.map((d) => requestHashOf(d.type, d.payload, d.orderingKey));
  for (let attempt = 0; ; attempt++) {
    try {
      const { answers, written } = await deps.ctx.db
        .transaction()
        .execute((trx) => publishKeyedOnce(deps, trx, scope, origin, drafts, hashes));
      // Committed: the new events count in the tenant's usage, replays of a held key do not.
      countPublished(deps.ctx, written.events, written.inserted);
      return answers;
    } catch (error) {
      if (!(error instanceof KeyTaken) || attempt >= drafts.length) throw error;
    }
  }
}

/**
 * What a request is compared by: its `type` and `data` as stored, and its `orderingKey` when it has
 * one (left out otherwise, so a key stored before ordering existed still matches its request).
 */
const requestHashOf = (type: string, payload: string, orderingKey?: string): string =>
  createHash('sha256')
    .update(JSON.stringify(orderingKey === undefined ? [type, payload] : [type, payload, orderingKey]))
    .digest('hex');

/**
 * The answer a key gave to this very request within its 24 hours, if it did. A retry is answered so
 * even when the event type's schema changed meanwhile and now refuses the data (docs/api/events.md):
 * the event was published, and the retry must not say otherwise. Read only when the catalog refused.
 */
export async function replayedAnswer(
  db: Kysely<DB>,
  scope: TenantScope,
  at: Date,
  draft: Omit<KeyedDraft, 'traceContext'>,
): Promise<PublishedEvent | undefined> {
  const [row] = await findIdempotencyKeys(db, scope, [draft.key]);
  if (!row || at.getTime() - new Date(row.created_at).getTime() >= IDEMPOTENCY_WINDOW_MS) return undefined;
  const owner = storedOwner(row);
  return owner.hash === requestHashOf(draft.type, draft.payload, draft.orderingKey)
    ? owner.answer
    : undefined;
}

/** A key's first use, within its 24 hours: what a request with that key and body answers. */
interface KeyOwner {
  hash: string;
  answer: PublishedEvent;
}

const storedOwner = (row: IdempotencyKeyRow): KeyOwner => ({
  hash: row.request_hash,
  answer: {
    id: row.event_id,
    type: row.event_type,
    createdAt: new Date(row.created_at).toISOString(),
    deliveries: row.delivery_count,
  },
});

/** A new key's event, fanned out: its row, its deliveries, what filters dropped, and its request's hash. */
type FreshEvent = { hash: string } & ReturnType<typeof eventRows>;

/** One attempt of `publishKeyed`, phase by phase: idempotency, fan-out, write; then each draft's answer. */
async function publishKeyedOnce(
  deps: ConnectionDeps,
  trx: Kysely<DB>,
  scope: TenantScope,
  origin: AuditOrigin,
  drafts: readonly KeyedDraft[],
  hashes: readonly string[],
): Promise<{ answers: Array<PublishedEvent | HttpProblem>; written: Written }> {
  const held = await heldKeys(trx, scope, origin.at, drafts);
  const fresh = await fanOutFresh(deps, trx, scope, origin.at, drafts, hashes, held);
  const written: Written = { events: [], inserted: [] };
  if (fresh.size > 0) {
    Object.assign(written, await writeFresh(trx, scope, origin.at, fresh));
    for (const [key, { hash, event }] of fresh) held.set(key, { hash, answer: answerOf(event) });
  }
  const answers = drafts.map((d, i) => {
    const owner = held.get(d.key)!;
    return owner.hash === hashes[i]
      ? owner.answer
      : new HttpProblem('conflict', 'This Idempotency-Key was used with a different body.');
  });
  return { answers, written };
}

/** What an attempt wrote: its new events and their deliveries as inserted (usage counts them). */
interface Written {
  events: ScopedEvent[];
  inserted: InsertedDelivery[];
}

/** Idempotency: the drafts' keys already used within their 24 hours, each with its first request. */
async function heldKeys(
  trx: Kysely<DB>,
  scope: TenantScope,
  at: Date,
  drafts: readonly KeyedDraft[],
): Promise<Map<string, KeyOwner>> {
  const stored = await findIdempotencyKeys(trx, scope, [...new Set(drafts.map((d) => d.key))]);
  return new Map(
    stored
      .filter((row) => at.getTime() - new Date(row.created_at).getTime() < IDEMPOTENCY_WINDOW_MS)
      .map((row) => [row.key, storedOwner(row)]),
  );
}

/**
 * Fan-out: the first draft of each key not held (never used, or expired) makes that key's new event,
 * with its deliveries over the tenant's connections (read only when there is such a draft).
 */
async function fanOutFresh(
  deps: ConnectionDeps,
  trx: Kysely<DB>,
  scope: TenantScope,
  at: Date,
  drafts: readonly KeyedDraft[],
  hashes: readonly string[],
  held: ReadonlyMap<string, KeyOwner>,
): Promise<Map<string, FreshEvent>> {
  const first = new Map<string, number>();
  for (const [i, d] of drafts.entries()) if (!held.has(d.key) && !first.has(d.key)) first.set(d.key, i);
  const fresh = new Map<string, FreshEvent>();
  if (first.size === 0) return fresh;
  const connections = await activeConnections(trx, scope);
  for (const [key, i] of first) {
    const { type, payload, traceContext, orderingKey } = drafts[i]!;
    fresh.set(key, {
      hash: hashes[i]!,
      ...eventRows(deps, scope, at, type, payload, connections, traceContext ?? null, orderingKey),
    });
  }
  return fresh;
}

/** Write: the new keys, then their events with deliveries, then what filters dropped. */
async function writeFresh(
  trx: Kysely<DB>,
  scope: TenantScope,
  at: Date,
  fresh: ReadonlyMap<string, FreshEvent>,
): Promise<Written> {
  // The keys first, sorted (see insertIdempotencyKeys): a publish that lost one writes nothing else.
  const rows = [...fresh].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const taken = await insertIdempotencyKeys(
    trx,
    scope,
    rows.map(([key, { hash, event }]) => ({
      key,
      request_hash: hash,
      event_id: event.id,
      event_type: event.type,
      delivery_count: event.delivery_count,
      created_at: event.created_at,
    })),
    new Date(at.getTime() - IDEMPOTENCY_WINDOW_MS),
  );
  if (taken.size < fresh.size) throw new KeyTaken();
  const events = [...fresh.values()].map(({ event, deliveries }) => ({ scope, event, deliveries }));
  const inserted = await insertEventGroup(trx, events);
  // In the same transaction: a keyed publish that fails here is safe to send again.
  await recordFiltered(trx, filteredOf([...fresh.values()]));
  return { events, inserted };
}
