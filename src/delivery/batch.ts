import type { AuditOrigin } from '../access/audit.js';
import type { TenantScope } from '../access/scope.js';
import type { ConnectionDeps } from '../connections/connections.js';
import { batchCatalog } from '../event-types/catalog.js';
import { HttpProblem, type FieldError } from '../http/problem.js';
import { bodyValidator } from '../http/validation.js';
import type { PublishSpan } from '../telemetry/types.js';
import type { EventWriter } from './group-commit.js';
import {
  answerOf,
  ended,
  payloadOf,
  publishKeyed,
  replayedAnswer,
  type KeyedDraft,
  type PublishedEvent,
} from './publish.js';

/** At most this many events in one batch (docs/api/events.md). */
export const MAX_BATCH_EVENTS = 100;

export interface BatchItemError {
  error: { status: number; code: string; detail: string | null; errors?: FieldError[] };
}

export interface BatchItem {
  type: string;
  data: Record<string, unknown>;
  idempotencyKey?: string;
  orderingKey?: string;
}

/**
 * Publishes each event of a batch exactly as if it were published alone (docs/api/events.md): the same
 * checks, the same fan-out, the same answer, in the batch's order. Events without an idempotency key
 * cannot affect one another, so they go to the group commit together (with other requests' events):
 * one read of the connections and one statement for all their events and deliveries. Events with a key
 * are published together in one transaction of four statements (publishKeyed), each answering as if
 * they had come one by one in the batch's order: two of one batch with the same key behave as two
 * requests would (the second gets the first's answer, or a conflict). An event refused on its own (its
 * fields, its size, an idempotency conflict) is that item's error; anything else (the database gone)
 * fails the request, and the events already written stay published, as separate requests would have.
 */
export async function publishBatch(
  deps: ConnectionDeps,
  writer: EventWriter,
  scope: TenantScope,
  origin: AuditOrigin,
  items: readonly unknown[],
  checkItem: (value: unknown) => BatchItem,
): Promise<Array<PublishedEvent | BatchItemError>> {
  const answers: Array<PublishedEvent | BatchItemError | undefined> = items.map(() => undefined);
  const refuse = (index: number, error: unknown) => (answers[index] = itemError(index, error));

  // With tracing on, each event that passes its checks has a publish span, as if published alone.
  const plain: PlainItem[] = [];
  const keyed: KeyedItem[] = [];
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
      const traceContext = span?.traceparent ?? null;
      const { orderingKey } = item;
      if (item.idempotencyKey === undefined)
        plain.push({ index, type: item.type, payload, span, orderingKey });
      else {
        const draft = { type: item.type, payload, key: item.idempotencyKey, traceContext, orderingKey };
        keyed.push({ index, draft, span });
      }
    } catch (error) {
      // A retry of an event the schema accepted before it changed gets that event's answer.
      const replay =
        item?.idempotencyKey !== undefined &&
        error instanceof HttpProblem &&
        (await replayedAnswer(deps.ctx.db, scope, origin.at, { ...item, key: item.idempotencyKey, payload }));
      if (replay) answers[index] = replay;
      else refuse(index, error);
    }
  }

  const [written, published] = await writeBoth(deps, writer, scope, origin, plain, keyed);
  for (const [i, p] of plain.entries()) answers[p.index] = ended(p.span, answerOf(written[i]!));
  for (const [i, { index, span }] of keyed.entries()) {
    const answer = ended(span, published[i]!);
    if (answer instanceof HttpProblem) refuse(index, answer);
    else answers[index] = answer;
  }
  return answers.map((answer, index) =>
    answer ? catalog.answer(index, answer) : { error: { status: 500, code: 'internal', detail: null } },
  );
}

/** An event's own refusal as its item's answer; anything else (a 500) fails the whole request. */
function itemError(index: number, error: unknown): BatchItemError {
  if (!(error instanceof HttpProblem) || error.status >= 500) throw error;
  // A field's problem names the field as the batch has it (`events.3.type: …`).
  const detail =
    error.detail === undefined
      ? null
      : error.code === 'validation_failed'
        ? `events.${index}${error.detail.startsWith('/') ? ': ' : '.'}${error.detail}`
        : error.detail;
  // A schema's findings (the event-type catalog) keep their paths from `/data`, as published alone.
  const errors = error.errors && error.detail?.startsWith('/') ? { errors: error.errors } : {};
  return { error: { status: error.status, code: error.code, detail, ...errors } };
}

type PlainItem = { index: number; type: string; payload: string; span?: PublishSpan; orderingKey?: string };
type KeyedItem = { index: number; draft: KeyedDraft; span?: PublishSpan };

/**
 * Keyed and unkeyed events cannot affect one another: both are written at once. Unless an ordering
 * key is in both: its events must be chained in the batch's order (docs/api/events.md, Ordering), so
 * then every event is written one after another, in that order, each as if published alone.
 */
async function writeBoth(
  deps: ConnectionDeps,
  writer: EventWriter,
  scope: TenantScope,
  origin: AuditOrigin,
  plain: readonly PlainItem[],
  keyed: readonly KeyedItem[],
) {
  const write = (p: PlainItem) =>
    writer.write({
      scope,
      at: origin.at,
      type: p.type,
      payload: p.payload,
      traceContext: p.span?.traceparent,
      orderingKey: p.orderingKey,
    });
  const plainKeys = new Set(plain.map((p) => p.orderingKey).filter((key) => key !== undefined));
  if (keyed.some((k) => k.draft.orderingKey !== undefined && plainKeys.has(k.draft.orderingKey))) {
    return writeInOrder(deps, scope, origin, plain, keyed, write);
  }
  try {
    return await Promise.all([
      Promise.all(plain.map(write)),
      publishKeyed(
        deps,
        scope,
        origin,
        keyed.map((k) => k.draft),
      ),
    ]);
  } catch (error) {
    for (const { span } of [...plain, ...keyed]) span?.failed(error);
    throw error;
  }
}

/** writeBoth's answers, written one event at a time in the batch's order. */
async function writeInOrder(
  deps: ConnectionDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  plain: readonly PlainItem[],
  keyed: readonly KeyedItem[],
  write: (p: PlainItem) => ReturnType<EventWriter['write']>,
) {
  const written: Array<Awaited<ReturnType<EventWriter['write']>>> = [];
  const published: Array<PublishedEvent | HttpProblem> = [];
  const order = [
    ...plain.map((p, i) => ({ index: p.index, run: async () => void (written[i] = await write(p)) })),
    ...keyed.map((k, i) => ({
      index: k.index,
      run: async () => {
        const [answer] = await publishKeyed(deps, scope, origin, [k.draft]);
        published[i] = answer!;
      },
    })),
  ].sort((a, b) => a.index - b.index);
  try {
    for (const step of order) await step.run();
  } catch (error) {
    for (const { span } of [...plain, ...keyed]) span?.failed(error);
    throw error;
  }
  return [written, published] as const;
}

export const itemValidator = (schema: object): ((value: unknown) => BatchItem) =>
  bodyValidator<BatchItem>(schema);
