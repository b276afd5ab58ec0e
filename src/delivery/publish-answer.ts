import { HttpProblem } from '../http/problem.js';
import type { PublishSpan } from '../telemetry/types.js';
import type { EventRow } from './store.js';

// What a publish answers for each event (docs/api/events.md), whichever path wrote it.

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

/** The publish span (tracing on) ends with the event's answer. */
export function ended<T extends PublishedEvent | HttpProblem>(span: PublishSpan | undefined, answer: T): T {
  if (!span) return answer;
  if (answer instanceof HttpProblem) span.failed(answer);
  else span.published({ id: answer.id, deliveries: answer.deliveries });
  return answer;
}
