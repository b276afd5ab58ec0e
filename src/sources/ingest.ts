import { Counter } from 'prom-client';
import type { AuditOrigin } from '../access/audit.js';
import { ingestScopeOf } from '../access/scope.js';
import type { AppContext } from '../context.js';
import { isIdOf, newId } from '../crypto/ids.js';
import { publishEvent, type PublishDeps } from '../delivery/publish.js';
import { parseJsonBytes } from '../http/json-body.js';
import { fieldProblem, HttpProblem, notFound } from '../http/problem.js';
import { createTokenRowCache } from '../keys/token-cache.js';
import { errorFields } from '../logger.js';
import type { ParsedRequest, Scheme, SignedRequest } from './scheme.js';
import { schemeOf } from './schemes/index.js';
import {
  claimDelivery,
  findSourceForIngest,
  insertRequestLog,
  releaseDelivery,
  settleDelivery,
  type RequestLogRow,
  type SourceRow,
} from './store.js';

// POST /ingest/:sourceId (docs/api/sources.md): outside the credential gate, inside every other
// protection. The order is the cost's: what refuses without the database first (the ID's shape, the
// per-source rate, then the signature over the bytes), and nothing unverified is parsed, logged in
// full or published.

/** How long a provider delivery ID is remembered (§22: 7 days). */
export const DEDUPLICATION_MS = 7 * 86_400_000;
/** Requests that fail their signature (or the rate, or a pause) logged per source and minute; the rest are counted. */
const NOISE_LOGGED_PER_MINUTE = 60;
const LOGGED_BODY_BYTES = 4096;
const LOGGED_HEADERS = 20;
/** How long a duplicate waits for the first request of its delivery ID to finish publishing. */
const DUPLICATE_WAIT_MS = 3_000;
const SOURCE_CACHE_MS = 500;
const ALWAYS_REDACTED = ['authorization', 'proxy-authorization', 'cookie', 'x-api-key'];

export const OUTCOMES = [
  'accepted',
  'duplicate',
  'invalid_signature',
  'rejected',
  'rate_limited',
  'paused',
] as const;
export type IngestOutcome = (typeof OUTCOMES)[number];

export interface IngestAnswer {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

export interface Ingest {
  handle(sourceId: string, request: SignedRequest): Promise<IngestAnswer>;
  /** Drops this process's cached copy of a source at once (it was edited, paused, rotated or deleted here). */
  forget(sourceId: string): void;
}

interface Found {
  row: SourceRow;
  entitlements: string[];
}

/** Counts per source and whole second (the rate) or minute (the noise logged), in this process. */
function windowCounter(windowMs: number) {
  const counts = new Map<string, { window: number; used: number }>();
  return (key: string, max: number, nowMs: number): boolean => {
    const window = Math.floor(nowMs / windowMs);
    const entry = counts.get(key);
    if (!entry || entry.window !== window) {
      if (counts.size > 10_000) counts.clear();
      counts.set(key, { window, used: 1 });
      return true;
    }
    if (entry.used >= max) return false;
    entry.used += 1;
    return true;
  };
}

/** The event type hubgate publishes: `<prefix>.<provider type>`, lower-cased, safe characters, ≤ 100. */
export function eventTypeOf(prefix: string, providerType: string): string {
  return `${prefix}.${providerType}`
    .toLowerCase()
    .replace(/[^a-z0-9_.-]/g, '_')
    .slice(0, 100);
}

/** The headers as the log keeps them: at most 20, signature and credential values `[redacted]`. */
function loggedHeaders(
  request: SignedRequest,
  scheme: Scheme,
  config: Record<string, unknown>,
): Record<string, string> {
  // Credentials a sender may add besides its signature are never kept either.
  const redacted = new Set([...scheme.signatureHeaders(config), ...ALWAYS_REDACTED]);
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers).slice(0, LOGGED_HEADERS)) {
    if (value === undefined) continue;
    kept[name] = redacted.has(name)
      ? '[redacted]'
      : (Array.isArray(value) ? value.join(', ') : value).slice(0, 1000);
  }
  return kept;
}

/** What one process's ingest keeps: its counters and its metric. */
interface IngestState {
  deps: PublishDeps;
  counted: Counter<'outcome'>;
  noise: (key: string, max: number, nowMs: number) => boolean;
}

/** Counts the request, and logs it unless it is noise past the minute's allowance. */
async function log(
  state: IngestState,
  found: Found,
  request: SignedRequest,
  outcome: IngestOutcome,
  details: Partial<RequestLogRow> = {},
): Promise<void> {
  const { ctx } = state.deps;
  state.counted.inc({ outcome });
  // A replayed delivery (GitHub, Shopify and hmac sign no timestamp) is a duplicate each time: noise too.
  const quiet = outcome !== 'accepted' && outcome !== 'rejected';
  if (quiet && !state.noise(found.row.id, NOISE_LOGGED_PER_MINUTE, Date.now())) return;
  const scheme = schemeOf(found.row.scheme);
  if (!scheme) return;
  try {
    await insertRequestLog(ctx.db, {
      id: newId('srq'),
      tenant_id: found.row.tenant_id,
      source_id: found.row.id,
      received_at: ctx.now(),
      outcome,
      event_id: null,
      provider_delivery_id: null,
      event_type: null,
      headers: loggedHeaders(request, scheme, found.row.config),
      body: request.raw.subarray(0, LOGGED_BODY_BYTES).toString('utf8'),
      body_truncated: request.raw.length > LOGGED_BODY_BYTES,
      ...details,
    });
  } catch (error) {
    // The answer to the provider does not depend on the log: a failed write is told, not thrown.
    ctx.log.warn(errorFields(error), 'ingest request log write failed');
  }
}

/** Signed with the source's secret, or with the previous one during a rotation's overlap. */
function verified(ctx: AppContext, found: Found, scheme: Scheme, request: SignedRequest, now: Date): boolean {
  const { row } = found;
  const secrets = [ctx.keyring.open('source-secrets', row.secret_sealed, row.id)];
  if (row.previous_secret_sealed && row.previous_valid_until && new Date(row.previous_valid_until) > now) {
    secrets.push(ctx.keyring.open('source-secrets', row.previous_secret_sealed, row.id));
  }
  return secrets.some((secret) => scheme.verify(request, secret, row.config, now));
}

/**
 * Null when this request is the first of its delivery ID (it publishes); else the event the first
 * became, once it has one: the first may still be publishing, on this process or another.
 */
async function firstEventOf(ctx: AppContext, sourceId: string, deliveryId: string): Promise<string | null> {
  const deadline = Date.now() + DUPLICATE_WAIT_MS;
  for (;;) {
    const claim = await claimDelivery(ctx.db, sourceId, deliveryId, ctx.now(), DEDUPLICATION_MS);
    if (claim.first) return null;
    if (claim.eventId) return claim.eventId;
    if (Date.now() > deadline) {
      throw new HttpProblem('unavailable', 'The same delivery is being received; try again.', {
        headers: { 'retry-after': '5' },
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The verified body, parsed as every API body is, or the refusal (logged). */
async function parsedBody(state: IngestState, found: Found, request: SignedRequest): Promise<ParsedRequest> {
  const body = parseJsonBytes(request.raw);
  if (body instanceof HttpProblem || typeof body !== 'object' || body === null || Array.isArray(body)) {
    await log(state, found, request, 'rejected');
    throw body instanceof HttpProblem ? body : fieldProblem('body', 'must be a JSON object');
  }
  return { ...request, body: body as Record<string, unknown> };
}

/** A verified request: parsed, typed, de-duplicated by its delivery ID, and published. */
async function publish(
  state: IngestState,
  found: Found,
  scheme: Scheme,
  request: SignedRequest,
  now: Date,
): Promise<IngestAnswer> {
  const { ctx } = state.deps;
  const { row } = found;
  const parsed = await parsedBody(state, found, request);
  // Slack checks a new request URL with a signed challenge, to be answered and nothing published.
  if (row.scheme === 'slack' && parsed.body.type === 'url_verification') {
    await log(state, found, request, 'accepted');
    return { status: 200, body: { challenge: parsed.body.challenge } };
  }
  const providerType = scheme.providerType(parsed, row.config);
  if (!providerType) {
    await log(state, found, request, 'rejected');
    throw fieldProblem('body', `has no event type where the ${row.scheme} scheme finds it`);
  }
  const type = eventTypeOf(row.type_prefix, providerType);
  const deliveryId = scheme.deliveryId(parsed, row.config)?.slice(0, 255);
  const details = { provider_delivery_id: deliveryId ?? null, event_type: type };
  const first = deliveryId === undefined ? null : await firstEventOf(ctx, row.id, deliveryId);
  if (first !== null) {
    await log(state, found, request, 'duplicate', { ...details, event_id: first });
    return { status: 200, body: { id: first, duplicate: true } };
  }
  const origin: AuditOrigin = { actorType: 'source', actorId: row.id, ip: null, requestId: null, at: now };
  const scope = ingestScopeOf({ tenantId: row.tenant_id, entitlements: found.entitlements });
  try {
    const published = await publishEvent(state.deps, scope, origin, { type, data: parsed.body }, undefined);
    if (deliveryId !== undefined) await settleDelivery(ctx.db, row.id, deliveryId, published.id);
    await log(state, found, request, 'accepted', { ...details, event_id: published.id });
    ctx.usage.count(row.tenant_id, 'ingested', 1, now);
    return { status: 202, body: { id: published.id } };
  } catch (error) {
    // Refused (the event type's schema, its size): the provider's retry may try again.
    if (deliveryId !== undefined) await releaseDelivery(ctx.db, row.id, deliveryId);
    await log(state, found, request, 'rejected', details);
    throw error;
  }
}

export function createIngest(deps: PublishDeps, metricsOf: (ctx: AppContext) => Counter<'outcome'>): Ingest {
  const { ctx } = deps;
  const state: IngestState = { deps, counted: metricsOf(ctx), noise: windowCounter(60_000) };
  const sources = createTokenRowCache<Found>((id) => findSourceForIngest(ctx.db, id), SOURCE_CACHE_MS);
  const perSecond = windowCounter(1_000);
  return {
    async handle(sourceId, request) {
      if (!isIdOf('src', sourceId)) throw notFound('source');
      const found = await sources.lookup(sourceId, Date.now());
      // A tenant no longer entitled to integrations has no events to publish into.
      // Not counted against the client address: one provider sends to many tenants' sources from
      // the same addresses, and one tenant's deleted source must not close the others' (0088).
      if (!found || !found.entitlements.includes('integrations')) throw notFound('source');
      const scheme = schemeOf(found.row.scheme);
      if (!scheme) throw notFound('source');
      const now = ctx.now();
      const { row } = found;
      if (!perSecond(row.id, row.max_per_second, now.getTime())) {
        await log(state, found, request, 'rate_limited');
        throw new HttpProblem(
          'rate_limited',
          `This source takes at most ${row.max_per_second} requests a second.`,
          {
            headers: { 'retry-after': '1' },
            limit: { policy: 'source', quota: row.max_per_second, windowSeconds: 1 },
          },
        );
      }
      if (row.status === 'paused') {
        await log(state, found, request, 'paused');
        throw new HttpProblem('unavailable', 'This source is paused.', { headers: { 'retry-after': '60' } });
      }
      if (!verified(ctx, found, scheme, request, now)) {
        await log(state, found, request, 'invalid_signature');
        throw new HttpProblem('invalid_signature', 'The signature or its timestamp does not verify.');
      }
      return publish(state, found, scheme, request, now);
    },
    forget: sources.forget,
  };
}

/** hubgate_ingest_requests_total{outcome}: every ingest request, logged or not. */
export function ingestMetrics(ctx: Pick<AppContext, 'metrics'>): Counter<'outcome'> {
  return new Counter({
    name: 'hubgate_ingest_requests_total',
    help: 'Requests to sources’ ingest URLs, by outcome (accepted, duplicate, invalid_signature, rejected, rate_limited, paused).',
    labelNames: ['outcome'] as const,
    registers: [ctx.metrics.registry],
  });
}
