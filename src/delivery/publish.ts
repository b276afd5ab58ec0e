import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { type AuditOrigin } from '../access/audit.js';
import type { TenantScope } from '../access/scope.js';
import type { ConnectionDeps } from '../connections/connections.js';
import type { DB } from '../db/schema.js';
import { checkEventType, withWarnings } from '../event-types/catalog.js';
import { MAX_JSON_DEPTH, nestingDepth, nestingProblem } from '../http/json-body.js';
import { HttpProblem } from '../http/problem.js';
import type { PublishSpan } from '../telemetry/types.js';
import { activeConnections, eventRows, filteredOf } from './fan-out.js';
import { recordFiltered } from './filtered-store.js';
import type { EventWriter } from './group-commit.js';
import { IDEMPOTENCY_WINDOW_MS } from './retention.js';
import {
  findIdempotencyKeys,
  insertEventGroup,
  insertIdempotencyKeys,
  type EventRow,
  type IdempotencyKeyRow,
} from './store.js';

// The delivery row of a test event is made as a published one's (operate.ts).

export const MAX_DATA_BYTES = 256 * 1024;

export interface PublishedEvent {
  id: string;
  type: string;
  createdAt: string;
  deliveries: number;
  /** The catalog's warnings (a deprecated type); absent when there are none. */
  warnings?: string[];
}

export const answerOf = (row: EventRow): PublishedEvent => ({
  id: row.id,
  type: row.type,
  createdAt: new Date(row.created_at).toISOString(),
  deliveries: row.delivery_count,
});

/** The event's data as stored, after the checks of docs/api/events.md and docs/api/limits.md (depth, then size). */
export function payloadOf(data: Record<string, unknown>): string {
  // `data` itself is the first level.
  if (nestingDepth(data) > MAX_JSON_DEPTH) throw nestingProblem('data');
  const payload = JSON.stringify(data);
  if (Buffer.byteLength(payload) > MAX_DATA_BYTES) {
    throw new HttpProblem('payload_too_large', 'data is larger than 256 KiB.');
  }
  return payload;
}

/**
 * Records an event and one pending delivery per active, credential-bound connection of the tenant
 * whose connector and `eventTypes` take its type, in one transaction (docs/api/events.md). With an
 * Idempotency-Key, the same key and body within 24 h answer the first result and fan out nothing:
 * the path of a batch's keyed events, with one. Without one, the event goes through the group commit
 * (`writer`) with other requests' events.
 */
export async function publishEvent(
  deps: ConnectionDeps,
  writer: EventWriter,
  scope: TenantScope,
  origin: AuditOrigin,
  body: { type: string; data: Record<string, unknown>; orderingKey?: string },
  idempotencyKey: string | undefined,
): Promise<PublishedEvent> {
  const span = deps.ctx.tracing?.startPublish(scope.tenantId, body.type);
  try {
    const payload = payloadOf(body.data);
    let warnings: string[];
    try {
      warnings = await checkEventType(deps.ctx.db, scope, body.type, body.data);
    } catch (problem) {
      const replay =
        idempotencyKey &&
        (await replayedAnswer(deps.ctx.db, scope, origin.at, {
          type: body.type,
          payload,
          key: idempotencyKey,
          orderingKey: body.orderingKey,
        }));
      if (!replay) throw problem;
      return ended(span, replay);
    }
    const traceContext = span?.traceparent ?? null;
    if (!idempotencyKey) {
      return withWarnings(
        ended(
          span,
          answerOf(
            await writer.write({
              scope,
              at: origin.at,
              type: body.type,
              payload,
              traceContext,
              orderingKey: body.orderingKey,
            }),
          ),
        ),
        warnings,
      );
    }
    const [answer] = await publishKeyed(deps, scope, origin, [
      { type: body.type, payload, key: idempotencyKey, traceContext, orderingKey: body.orderingKey },
    ]);
    if (answer instanceof HttpProblem) throw answer;
    return withWarnings(ended(span, answer!), warnings);
  } catch (error) {
    span?.failed(error);
    throw error;
  }
}

/** The publish span (tracing on) ends with the event's answer. */
export function ended<T extends PublishedEvent | HttpProblem>(span: PublishSpan | undefined, answer: T): T {
  if (!span) return answer;
  if (answer instanceof HttpProblem) span.failed(answer);
  else span.published({ id: answer.id, deliveries: answer.deliveries });
  return answer;
}

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
      return await deps.ctx.db
        .transaction()
        .execute((trx) => publishKeyedOnce(deps, trx, scope, origin, drafts, hashes));
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

async function publishKeyedOnce(
  deps: ConnectionDeps,
  trx: Kysely<DB>,
  scope: TenantScope,
  origin: AuditOrigin,
  drafts: readonly KeyedDraft[],
  hashes: readonly string[],
): Promise<Array<PublishedEvent | HttpProblem>> {
  const at = origin.at.getTime();
  const stored = await findIdempotencyKeys(trx, scope, [...new Set(drafts.map((d) => d.key))]);
  const held = new Map(
    stored
      .filter((row) => at - new Date(row.created_at).getTime() < IDEMPOTENCY_WINDOW_MS)
      .map((row) => [row.key, storedOwner(row)]),
  );
  // The first draft of each key not held (never used, or expired) makes that key's new event.
  const first = new Map<string, number>();
  for (const [i, d] of drafts.entries()) if (!held.has(d.key) && !first.has(d.key)) first.set(d.key, i);
  const fresh = new Map<string, { hash: string } & ReturnType<typeof eventRows>>();
  if (first.size > 0) {
    const connections = await activeConnections(trx, scope);
    for (const [key, i] of first) {
      const { type, payload, traceContext, orderingKey } = drafts[i]!;
      fresh.set(key, {
        hash: hashes[i]!,
        ...eventRows(deps, scope, origin.at, type, payload, connections, traceContext ?? null, orderingKey),
      });
    }
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
      new Date(at - IDEMPOTENCY_WINDOW_MS),
    );
    if (taken.size < fresh.size) throw new KeyTaken();
    await insertEventGroup(
      trx,
      [...fresh.values()].map(({ event, deliveries }) => ({ scope, event, deliveries })),
    );
    // In the same transaction: a keyed publish that fails here is safe to send again.
    await recordFiltered(trx, filteredOf([...fresh.values()]));
    for (const [key, { hash, event }] of fresh) held.set(key, { hash, answer: answerOf(event) });
  }
  return drafts.map((d, i) => {
    const owner = held.get(d.key)!;
    return owner.hash === hashes[i]
      ? owner.answer
      : new HttpProblem('conflict', 'This Idempotency-Key was used with a different body.');
  });
}
