import { HttpProblem, type FieldError } from '../http/problem.js';
import { bodyValidator } from '../http/validation.js';

// What a batch publish adds to the phases it shares with a single one (publish.ts): its items'
// shape, and how an event refused on its own becomes its item's answer.

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

/** An event's own refusal as its item's answer; anything else (a 500) fails the whole request. */
export function itemError(index: number, error: unknown): BatchItemError {
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

export const itemValidator = (schema: object): ((value: unknown) => BatchItem) =>
  bodyValidator<BatchItem>(schema);
