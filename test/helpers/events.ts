import assert from 'node:assert/strict';
import type { Static } from 'typebox';
import type { DeliverySchema } from '../../src/delivery/routes.js';
import type { ProblemSchema } from '../../src/http/schemas.js';
import type { Harness, TestResponse, TestSession } from './harness.js';
import { waitUntil } from './wait.js';

/** One entry of a connection's delivery log (`GET …/connections/:id/events`). */
export type Delivery = Static<typeof DeliverySchema>;
/** One page of a list (docs/api/conventions.md). */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}
/** An error answer (docs/api/errors.md). */
export type Problem = Static<typeof ProblemSchema>;
/** The answer to `POST /api/v1/integrations/events`. */
export interface PublishedEvent {
  id: string;
  type: string;
  createdAt: string;
  deliveries: number;
}

/** Who publishes: a signed-in user's session, or a tenant key's secret. */
export type Publisher = TestSession | { token: string };

const TERMINAL = new Set(['delivered', 'failed', 'cancelled']);

/**
 * Publishes an event as a tenant (`order.created` with `{}` unless `event` says otherwise) and checks
 * that the answer is `status` (202 unless given). The body is typed: `publishEvent<Problem>(…, { status: 409 })`.
 */
export async function publishEvent<T = PublishedEvent>(
  h: Harness,
  as: Publisher,
  event: { type?: string; data?: unknown } = {},
  options: { headers?: Record<string, string>; status?: number } = {},
): Promise<TestResponse<T>> {
  const body = { type: event.type ?? 'order.created', data: event.data ?? {} };
  const credential = 'token' in as ? { token: as.token } : { session: as };
  const response = await h.request<T>('POST', '/api/v1/integrations/events', {
    ...credential,
    body,
    headers: options.headers,
  });
  const status = options.status ?? 202;
  assert.equal(
    response.status,
    status,
    `publishing ${body.type} answered ${response.status}: ${response.text}`,
  );
  return response;
}

/**
 * What `waitForDeliveries` waits for: at least `settled` deliveries delivered, failed or cancelled;
 * exactly these `statuses` (in any order); or whatever the function says of the log.
 */
export type DeliveriesWanted =
  { settled: number } | { statuses: readonly string[] } | ((deliveries: Delivery[]) => boolean);

function holds(wanted: DeliveriesWanted, deliveries: Delivery[]): boolean {
  if (typeof wanted === 'function') return wanted(deliveries);
  if ('settled' in wanted) return deliveries.filter((d) => TERMINAL.has(d.status)).length >= wanted.settled;
  const sorted = (list: readonly string[]) => JSON.stringify([...list].sort());
  return sorted(deliveries.map((d) => d.status)) === sorted(wanted.statuses);
}

function describeWanted(wanted: DeliveriesWanted): string {
  if (typeof wanted === 'function') return 'the deliveries the test waits for';
  if ('settled' in wanted) return `${wanted.settled} settled deliveries`;
  return `deliveries ${JSON.stringify(wanted.statuses)}`;
}

interface WaitForDeliveriesOptions {
  /** What the test waits for, as a failure says it (the statuses last seen follow). */
  message?: string;
  /** 10 s unless given. */
  timeoutMs?: number;
}

/**
 * Reads a connection's delivery log (its first page of 100, newest first) until it holds what is `wanted`,
 * and answers it; fails the test after `timeoutMs`, showing the statuses last seen. Waiting for
 * settled deliveries answers at least one: `const [entry] = await waitForDeliveries(…, { settled: 1 })`.
 */
export async function waitForDeliveries(
  h: Harness,
  session: TestSession,
  connectionId: string,
  wanted: { settled: number },
  options?: WaitForDeliveriesOptions,
): Promise<[Delivery, ...Delivery[]]>;
export async function waitForDeliveries(
  h: Harness,
  session: TestSession,
  connectionId: string,
  wanted: DeliveriesWanted,
  options?: WaitForDeliveriesOptions,
): Promise<Delivery[]>;
export async function waitForDeliveries(
  h: Harness,
  session: TestSession,
  connectionId: string,
  wanted: DeliveriesWanted,
  options: WaitForDeliveriesOptions = {},
): Promise<Delivery[]> {
  let seen: Delivery[] = [];
  const path = `/api/v1/integrations/connections/${connectionId}/events?limit=100`;
  return waitUntil(
    async () => {
      const log = await h.request<Page<Delivery>>('GET', path, { session });
      assert.equal(log.status, 200, `the delivery log of ${connectionId}: ${log.text}`);
      seen = log.body.data;
      return holds(wanted, seen) && seen;
    },
    {
      message: () =>
        `${options.message ?? describeWanted(wanted)} on ${connectionId}; the log shows ${JSON.stringify(seen.map((d) => d.status))}`,
      timeoutMs: options.timeoutMs ?? 10_000,
    },
  );
}
