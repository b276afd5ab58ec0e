import type { AuditOrigin } from '../access/audit.js';
import type { TenantScope } from '../access/scope.js';
import type { ConnectionDeps } from '../connections/connections.js';
import { HttpProblem } from '../http/problem.js';
import { bodyValidator } from '../http/validation.js';
import type { EventWriter } from './group-commit.js';
import { answerOf, payloadOf, publishKeyed, type KeyedDraft, type PublishedEvent } from './publish.js';

/** At most this many events in one batch (docs/api/events.md). */
export const MAX_BATCH_EVENTS = 100;

export interface BatchItemError {
  error: { status: number; code: string; detail: string | null };
}

export interface BatchItem {
  type: string;
  data: Record<string, unknown>;
  idempotencyKey?: string;
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
  const refuse = (index: number, error: unknown) => {
    if (!(error instanceof HttpProblem) || error.status >= 500) throw error;
    // A field's problem names the field as the batch has it (`events.3.type: …`).
    const detail =
      error.detail === undefined
        ? null
        : error.code === 'validation_failed'
          ? `events.${index}.${error.detail}`
          : error.detail;
    answers[index] = { error: { status: error.status, code: error.code, detail } };
  };

  const plain: Array<{ index: number; type: string; payload: string }> = [];
  const keyed: Array<{ index: number; draft: KeyedDraft }> = [];
  for (const [index, value] of items.entries()) {
    try {
      const item = checkItem(value);
      const payload = payloadOf(item.data);
      if (item.idempotencyKey === undefined) plain.push({ index, type: item.type, payload });
      else keyed.push({ index, draft: { type: item.type, payload, key: item.idempotencyKey } });
    } catch (error) {
      refuse(index, error);
    }
  }

  // Keyed and unkeyed events cannot affect one another: both are written at once.
  const drafts = keyed.map((k) => k.draft);
  const [written, published] = await Promise.all([
    Promise.all(plain.map((p) => writer.write({ scope, at: origin.at, type: p.type, payload: p.payload }))),
    publishKeyed(deps, scope, origin, drafts),
  ]);
  for (const [i, p] of plain.entries()) answers[p.index] = answerOf(written[i]!);
  for (const [i, { index }] of keyed.entries()) {
    const answer = published[i]!;
    if (answer instanceof HttpProblem) refuse(index, answer);
    else answers[index] = answer;
  }
  return answers.map((answer) => answer ?? { error: { status: 500, code: 'internal', detail: null } });
}

export const itemValidator = (schema: object): ((value: unknown) => BatchItem) =>
  bodyValidator<BatchItem>(schema);
