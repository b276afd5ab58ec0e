import type { AuditOrigin } from '../access/audit.js';
import type { ConnectionDeps } from '../connections/connections.js';
import { HttpProblem } from '../http/problem.js';
import { bodyValidator } from '../http/validation.js';
import type { TenantScope } from '../tenants/scope.js';
import { type PublishedEvent, publishEvent } from './publish.js';

/** At most this many events in one batch (contract §7). */
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
 * Publishes each event of a batch exactly as if it were published alone (contract §7), in order, so
 * two events of one batch with the same Idempotency-Key behave as two requests would: the second gets
 * the first's answer. An event refused on its own (its fields, an idempotency conflict, its size) is
 * that item's error; anything else (the database gone) fails the request, and the events before it
 * stay published, as separate requests would have.
 */
export async function publishBatch(
  deps: ConnectionDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  items: readonly unknown[],
  checkItem: (value: unknown) => BatchItem,
): Promise<Array<PublishedEvent | BatchItemError>> {
  const answers: Array<PublishedEvent | BatchItemError> = [];
  for (const [index, value] of items.entries()) {
    try {
      const item = checkItem(value);
      answers.push(
        await publishEvent(deps, scope, origin, { type: item.type, data: item.data }, item.idempotencyKey),
      );
    } catch (error) {
      if (!(error instanceof HttpProblem) || error.status >= 500) throw error;
      // A field's problem names the field as the batch has it (`events.3.type: …`).
      const detail =
        error.detail === undefined
          ? null
          : error.code === 'validation_failed'
            ? `events.${index}.${error.detail}`
            : error.detail;
      answers.push({ error: { status: error.status, code: error.code, detail } });
    }
  }
  return answers;
}

export const itemValidator = (schema: object): ((value: unknown) => BatchItem) =>
  bodyValidator<BatchItem>(schema);
