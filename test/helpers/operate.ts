import assert from 'node:assert/strict';
import type { Delivery, Page, Publisher } from './events.js';
import type { Harness, RequestOptions, TestResponse, TestSession } from './harness.js';

// Helpers for the tests of docs/api/events.md (operating deliveries): reading a connection, its log and its
// audit entries, and the calls that pause, resume, recover and test it, as a tenant makes them.

export const CONNECTIONS = '/api/v1/integrations/connections';

/** A connection as the API shows it (docs/api/connections.md, with the pause fields). */
export interface Connection {
  id: string;
  connectorKey: string;
  displayName: string;
  status: 'active' | 'paused' | 'disabled';
  config: Record<string, unknown>;
  credentialsBound: boolean;
  deliveryEnabled: boolean;
  createdAt: string;
  revokedAt: string | null;
  pausedAt: string | null;
  pausedReason: 'manual' | 'failing' | 'gone' | null;
}

/** A log entry with the additions of docs/api/events.md, which the schema of the log may not declare yet. */
export type OperatedDelivery = Delivery & { test?: boolean };

/** One entry of `GET /api/v1/company/audit-log`. */
export interface AuditEntry {
  id: string;
  action: string;
  actorType: string;
  actorId: string | null;
  targetType: string | null;
  targetId: string | null;
  metadata: Record<string, unknown>;
  createdAt: string;
}

/** The request options that send `as`: a session (cookie and CSRF) or a key's secret. */
export const as = (who: Publisher): Pick<RequestOptions, 'session' | 'token'> =>
  'token' in who ? { token: who.token } : { session: who };

/** Reads one connection; fails the test unless it is 200. */
export async function readConnection(h: Harness, who: Publisher, id: string): Promise<Connection> {
  const r = await h.request<Connection>('GET', `${CONNECTIONS}/${id}`, as(who));
  assert.equal(r.status, 200, `reading connection ${id} answered ${r.status}: ${r.text}`);
  return r.body;
}

/** Creates a connection from a create body; fails the test unless it is 201. */
export async function createConnection(
  h: Harness,
  session: TestSession,
  body: Record<string, unknown>,
): Promise<Connection> {
  const r = await h.request<Connection>('POST', CONNECTIONS, { session, body });
  assert.equal(r.status, 201, `creating a connection answered ${r.status}: ${r.text}`);
  return r.body;
}

/** Binds credentials; fails the test unless it is 200. */
export async function bindCredentials(
  h: Harness,
  session: TestSession,
  id: string,
  body: Record<string, unknown>,
): Promise<{ connection: Connection; credentials: Record<string, string> }> {
  const r = await h.request('PUT', `${CONNECTIONS}/${id}/credentials`, { session, body });
  assert.equal(r.status, 200, `binding credentials answered ${r.status}: ${r.text}`);
  return r.body;
}

/** The connection's delivery log, first page of up to 100 entries, newest first. */
export async function logOf(
  h: Harness,
  who: Publisher,
  connectionId: string,
  query = '',
): Promise<OperatedDelivery[]> {
  const separator = query ? '&' : '';
  const r = await h.request<Page<OperatedDelivery>>(
    'GET',
    `${CONNECTIONS}/${connectionId}/events?limit=100${separator}${query}`,
    as(who),
  );
  assert.equal(r.status, 200, `the delivery log of ${connectionId} answered ${r.status}: ${r.text}`);
  return r.body.data;
}

/** The tenant's audit entries about one target, newest first (the last 100 of the tenant). */
export async function auditOf(h: Harness, session: TestSession, targetId: string): Promise<AuditEntry[]> {
  const r = await h.request<Page<AuditEntry>>('GET', '/api/v1/company/audit-log?limit=100', { session });
  assert.equal(r.status, 200, `the audit log answered ${r.status}: ${r.text}`);
  return r.body.data.filter((e) => e.targetId === targetId);
}

/** `POST …/:id/<action>` with an optional body, as `who`; the body untyped unless the test says. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as the harness's request: untyped by default
export function operate<T = any>(
  h: Harness,
  who: Publisher,
  id: string,
  action: 'pause' | 'resume' | 'recover' | 'test',
  body?: unknown,
): Promise<TestResponse<T>> {
  return h.request<T>('POST', `${CONNECTIONS}/${id}/${action}`, { ...as(who), body });
}

/** Pauses a connection; fails the test unless it is 200 and paused. */
export async function pause(h: Harness, who: Publisher, id: string): Promise<Connection> {
  const r = await operate<Connection>(h, who, id, 'pause');
  assert.equal(r.status, 200, `pausing ${id} answered ${r.status}: ${r.text}`);
  assert.equal(r.body.status, 'paused', `pausing ${id} answered a connection that is not paused`);
  return r.body;
}

/** Resumes a connection; fails the test unless it is 200 and active. */
export async function resume(
  h: Harness,
  who: Publisher,
  id: string,
  body: Record<string, unknown> = {},
): Promise<{ connection: Connection; replayed: number }> {
  const r = await operate<{ connection: Connection; replayed: number }>(h, who, id, 'resume', body);
  assert.equal(r.status, 200, `resuming ${id} answered ${r.status}: ${r.text}`);
  assert.equal(r.body.connection.status, 'active', `resuming ${id} answered a connection that is not active`);
  return r.body;
}

/** PATCH a connection (as `who`) and answer the response, whatever its status. */
export function patchConnection(
  h: Harness,
  who: Publisher,
  id: string,
  body: unknown,
): Promise<TestResponse<Connection>> {
  return h.request<Connection>('PATCH', `${CONNECTIONS}/${id}`, { ...as(who), body });
}

/** The firing alerts of the platform (`GET /api/v1/platform/alerting/alerts`). */
export async function firingAlerts(
  h: Harness,
): Promise<Array<{ fingerprint: string; labels: Record<string, string> }>> {
  const r = await h.request('GET', '/api/v1/platform/alerting/alerts', { token: h.platformToken });
  assert.equal(r.status, 200, `the firing alerts answered ${r.status}: ${r.text}`);
  return r.body.data;
}

/** The headers a Standard Webhooks verifier reads, from a received request. */
export function webhookHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  return {
    'webhook-id': String(headers['webhook-id']),
    'webhook-timestamp': String(headers['webhook-timestamp']),
    'webhook-signature': String(headers['webhook-signature']),
  };
}
