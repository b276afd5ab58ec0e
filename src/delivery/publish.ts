import type { AuditOrigin } from '../access/audit.js';
import type { TenantScope } from '../access/scope.js';
import type { ConnectionDeps } from '../connections/connections.js';
import { batchCatalog, checkEventType, withWarnings } from '../event-types/catalog.js';
import { MAX_JSON_DEPTH, nestingDepth, nestingProblem } from '../http/json-body.js';
import { HttpProblem } from '../http/problem.js';
import { errorFields } from '../logger.js';
import type { PublishSpan } from '../telemetry/types.js';
import { itemError, type BatchItem, type BatchItemError } from './batch.js';
import type { EventWriter } from './group-commit.js';
import { publishKeyed, replayedAnswer, type KeyedDraft } from './idempotency.js';
import { answerOf, ended, type PublishedEvent } from './publish-answer.js';

// A publish, phase by phase (docs/decisions/0072-publish-and-attempt-phases.md), the same phases
// for one event (`publishEvent`) and for a batch (`publishBatch`, each event as if published alone):
//
//   validate     the data's depth and size, then the event-type catalog (`validateEvent`,
//                `validateBatch`); a keyed event refused here answers its key's first answer if
//                this very request had it (idempotency.ts, `replayedAnswer`)
//   idempotency  a keyed event's key: already used within 24 h, it answers its first use's answer
//   fan-out      the tenant's candidate connections read, one delivery row per taker (fan-out.ts)
//   write        the event and its deliveries inserted: events without a key by the group commit
//                (group-commit.ts), with other requests' events; keyed ones in a transaction of
//                their own, which also runs their idempotency and fan-out (idempotency.ts)
//   hand over    the deliveries to a worker: the group commit hands its own to this process's
//                worker (direct dispatch) and announces the rest; keyed ones are announced here
//
// `writeEvents` runs idempotency, fan-out and write for both; `handOver` ends both.

export type { PublishedEvent } from './publish-answer.js';

export const MAX_DATA_BYTES = 256 * 1024;

/** What a publish needs: the connections' catalog and keyring, the group commit, and the announcer. */
export type PublishDeps = ConnectionDeps & {
  writer: EventWriter;
  /** Tells the workers (this process's and, on PostgreSQL, every other's) that deliveries wait. */
  announce: () => void;
};

/** An event past its validate phase: its data as stored, its keys, its place and its publish span. */
interface Drafted {
  /** Its place in the request (0 for a single publish), which answers come back in. */
  index: number;
  type: string;
  payload: string;
  /** Its Idempotency-Key, if it has one. */
  key?: string;
  /** Its `orderingKey` (docs/api/events.md, Ordering), if any. */
  orderingKey?: string;
  span?: PublishSpan;
}

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
 * Idempotency-Key, the same key and body within 24 h answer the first result and fan out nothing.
 * Without one, the event goes through the group commit with other requests' events.
 */
export async function publishEvent(
  deps: PublishDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  body: { type: string; data: Record<string, unknown>; orderingKey?: string },
  idempotencyKey: string | undefined,
): Promise<PublishedEvent> {
  const span = deps.ctx.tracing?.startPublish(scope.tenantId, body.type);
  const key = idempotencyKey || undefined;
  let checked: Awaited<ReturnType<typeof validateEvent>>;
  try {
    checked = await validateEvent(deps, scope, origin, body, key);
  } catch (error) {
    span?.failed(error);
    throw error;
  }
  if ('replay' in checked) return handOver(deps, key !== undefined, [ended(span, checked.replay)])[0]!;
  const [answer] = await writeEvents(deps, scope, origin, [{ ...checked.draft, span }]);
  if (answer instanceof HttpProblem) throw answer;
  return handOver(deps, key !== undefined, [withWarnings(answer!, checked.warnings)])[0]!;
}

/**
 * Validate, for one event: its data (`payloadOf`), then the catalog (one read of the type's
 * schema). A keyed event the catalog refuses answers its key's first answer if this very request had it.
 */
async function validateEvent(
  deps: PublishDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  body: { type: string; data: Record<string, unknown>; orderingKey?: string },
  key: string | undefined,
): Promise<{ draft: Drafted; warnings: string[] } | { replay: PublishedEvent }> {
  const { type, orderingKey } = body;
  const payload = payloadOf(body.data);
  try {
    const warnings = await checkEventType(deps.ctx.db, scope, type, body.data);
    return { draft: { index: 0, type, payload, key, orderingKey }, warnings };
  } catch (problem) {
    const replay =
      key !== undefined &&
      (await replayedAnswer(deps.ctx.db, scope, origin.at, { type, payload, key, orderingKey }));
    if (!replay) throw problem;
    return { replay };
  }
}

/**
 * Publishes each event of a batch exactly as if it were published alone (docs/api/events.md): the same
 * phases, the same answer, in the batch's order. Events without an idempotency key cannot affect one
 * another, so they go to the group commit together (with other requests' events): one read of the
 * connections and one statement for all their events and deliveries. Events with a key are published
 * together in one transaction of four statements (publishKeyed), each answering as if they had come
 * one by one in the batch's order: two of one batch with the same key behave as two requests would
 * (the second gets the first's answer, or a conflict). An event refused on its own (its fields, its
 * size, an idempotency conflict) is that item's error; anything else (the database gone) fails the
 * request, and the events already written stay published, as separate requests would have.
 */
export async function publishBatch(
  deps: PublishDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  items: readonly unknown[],
  checkItem: (value: unknown) => BatchItem,
): Promise<Array<PublishedEvent | BatchItemError>> {
  const { catalog, drafted, answers } = await validateBatch(deps, scope, origin, items, checkItem);
  const written = await writeEvents(deps, scope, origin, drafted);
  for (const [i, { index }] of drafted.entries()) {
    const answer = written[i]!;
    answers[index] = answer instanceof HttpProblem ? itemError(index, answer) : answer;
  }
  // The keyed events are written apart from the group commit, which announces its own.
  const keyed = items.some((e) => typeof e === 'object' && e !== null && 'idempotencyKey' in e);
  return handOver(
    deps,
    keyed,
    answers.map((answer, index) =>
      answer ? catalog.answer(index, answer) : { error: { status: 500, code: 'internal', detail: null } },
    ),
  );
}

/**
 * Validate, for a batch: each item's fields, its data (`payloadOf`), then the catalog, read once for
 * every type of the batch. An event refused on its own gets its item's error, or its key's first
 * answer if this very request had it; each event that passes gets its publish span (tracing on).
 */
async function validateBatch(
  deps: PublishDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  items: readonly unknown[],
  checkItem: (value: unknown) => BatchItem,
) {
  const answers: Array<PublishedEvent | BatchItemError | undefined> = items.map(() => undefined);
  const drafted: Drafted[] = [];
  const catalog = await batchCatalog(deps.ctx.db, scope, items);
  for (const [index, value] of items.entries()) {
    await catalog.pause();
    let item: BatchItem | undefined;
    let payload = '';
    try {
      item = checkItem(value);
      payload = payloadOf(item.data);
      catalog.check(index, item.type, item.data);
      const span = deps.ctx.tracing?.startPublish(scope.tenantId, item.type);
      const { type, idempotencyKey: key, orderingKey } = item;
      drafted.push({ index, type, payload, key, orderingKey, span });
    } catch (error) {
      // A retry of an event the schema accepted before it changed gets that event's answer.
      const replay =
        item?.idempotencyKey !== undefined &&
        error instanceof HttpProblem &&
        (await replayedAnswer(deps.ctx.db, scope, origin.at, { ...item, key: item.idempotencyKey, payload }));
      answers[index] = replay || itemError(index, error);
    }
  }
  return { catalog, drafted, answers };
}

/** Hand over, for keyed events: a publish that wrote (or answered) deliveries announces them. */
function handOver<T extends object>(deps: PublishDeps, keyed: boolean, answers: T[]): T[] {
  if (keyed && answers.some((answer) => 'deliveries' in answer && (answer.deliveries as number) > 0)) {
    deps.announce();
  }
  return answers;
}

/**
 * Idempotency, fan-out and write for drafted events, each answered as if published alone: its event,
 * or (a keyed one) a conflict. Events without a key go to the group commit, keyed ones to their own
 * transaction (publishKeyed), both at once: they cannot affect one another. Unless an ordering key is
 * in both: its events must be chained in the request's order (docs/api/events.md, Ordering), so then
 * every event is written one after another, in that order, each as if published alone.
 */
async function writeEvents(
  deps: PublishDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  drafted: readonly Drafted[],
): Promise<Array<PublishedEvent | HttpProblem>> {
  // Quotas (docs/api/quotas.md): the tenant's events of the day are reserved before any is written,
  // all of them or none (a batch that would cross the quota is refused whole); those not written
  // (a failed write, an idempotent replay, a conflict) are given back.
  const reservation = await deps.ctx.quotas.reserveEvents(scope.tenantId, drafted.length, origin.at);
  const made = { events: 0 };
  const giveBack = () =>
    reservation
      .giveBack(drafted.length - made.events)
      .catch((error: unknown) => deps.ctx.log.warn(errorFields(error), 'quota reservation not given back'));
  let answers: Array<PublishedEvent | HttpProblem>;
  try {
    answers = await writeReserved(deps, scope, origin, drafted, made);
  } catch (error) {
    await giveBack();
    throw error;
  }
  await giveBack();
  return answers;
}

/** writeEvents' writes, counting in `made` the events they create (for the quota's reservation). */
async function writeReserved(
  deps: PublishDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  drafted: readonly Drafted[],
  made: { events: number },
): Promise<Array<PublishedEvent | HttpProblem>> {
  const plain = drafted.filter((d) => d.key === undefined);
  const keyed = drafted.filter((d) => d.key !== undefined);
  const write = async (d: Drafted) => {
    const row = await deps.writer.write({
      scope,
      at: origin.at,
      type: d.type,
      payload: d.payload,
      traceContext: d.span?.traceparent ?? null,
      orderingKey: d.orderingKey,
    });
    made.events++;
    return row;
  };
  // Across the keyed writes of one request: in order, a key given twice is written by two calls.
  const fresh = new Set<string>();
  const writeKeyed = async (drafts: readonly Drafted[]) => {
    const answers = await publishKeyed(deps, scope, origin, drafts.map(keyedDraftOf));
    made.events += freshEvents(answers, origin.at, fresh);
    return answers;
  };
  const plainKeys = new Set(plain.map((d) => d.orderingKey).filter((key) => key !== undefined));
  const inOrder = keyed.some((d) => d.orderingKey !== undefined && plainKeys.has(d.orderingKey));
  let written: Awaited<ReturnType<EventWriter['write']>>[];
  let published: Array<PublishedEvent | HttpProblem>;
  try {
    [written, published] = inOrder
      ? await writeInOrder(plain, keyed, write, writeKeyed)
      : // Every write ends before a failure is thrown: the reservation is settled on what was written.
        await bothSettled(settled(plain.map(write)), writeKeyed(keyed));
  } catch (error) {
    for (const { span } of [...plain, ...keyed]) span?.failed(error);
    throw error;
  }
  // The spans end as the events were answered before: those without a key first.
  const answers = new Map<Drafted, PublishedEvent | HttpProblem>();
  for (const [i, d] of plain.entries()) answers.set(d, ended(d.span, answerOf(written[i]!)));
  for (const [i, d] of keyed.entries()) answers.set(d, ended(d.span, published[i]!));
  return drafted.map((d) => answers.get(d)!);
}

/** Both results, once both ended; the first failure after both did (so nothing is still writing). */
async function bothSettled<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [first, second] = await Promise.allSettled([a, b]);
  if (first.status === 'rejected') throw first.reason;
  if (second.status === 'rejected') throw second.reason;
  return [first.value, second.value];
}

/** Like Promise.all, but it waits for every promise before it throws the first failure. */
async function settled<T>(promises: ReadonlyArray<Promise<T>>): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/**
 * The events a keyed publish created: those made at this publish's time, each once (a key given twice
 * answers one event). A replay answers an event made earlier, and a conflict none.
 */
function freshEvents(
  answers: ReadonlyArray<PublishedEvent | HttpProblem>,
  at: Date,
  seen: Set<string>,
): number {
  const stamp = at.toISOString();
  const before = seen.size;
  for (const answer of answers)
    if (!(answer instanceof HttpProblem) && answer.createdAt === stamp) seen.add(answer.id);
  return seen.size - before;
}

const keyedDraftOf = (d: Drafted): KeyedDraft => ({
  type: d.type,
  payload: d.payload,
  key: d.key!,
  traceContext: d.span?.traceparent ?? null,
  orderingKey: d.orderingKey,
});

/** writeEvents' writes, one event at a time in the request's order. */
async function writeInOrder(
  plain: readonly Drafted[],
  keyed: readonly Drafted[],
  write: (d: Drafted) => ReturnType<EventWriter['write']>,
  writeKeyed: (drafts: readonly Drafted[]) => Promise<Array<PublishedEvent | HttpProblem>>,
) {
  const written: Array<Awaited<ReturnType<EventWriter['write']>>> = [];
  const published: Array<PublishedEvent | HttpProblem> = [];
  const order = [
    ...plain.map((d, i) => ({ index: d.index, run: async () => void (written[i] = await write(d)) })),
    ...keyed.map((d, i) => ({
      index: d.index,
      run: async () => {
        const [answer] = await writeKeyed([d]);
        published[i] = answer!;
      },
    })),
  ].sort((a, b) => a.index - b.index);
  for (const step of order) await step.run();
  return [written, published] as const;
}
