import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { Kysely } from 'kysely';
import { recordAudit, type AuditOrigin } from '../access/audit.js';
import type { TenantScope } from '../access/scope.js';
import type { Keyring } from '../crypto/keyring.js';
import type { DB } from '../db/schema.js';
import { createTurnBatcher } from '../db/turn-batch.js';
import {
  decodePosition,
  encodePosition,
  notThisListsCursor,
  type CursorBinding,
} from '../http/pagination.js';
import { HttpProblem } from '../http/problem.js';
import { checkSchema, lastValidationWork, validateData } from './schemas.js';
import {
  deleteEventTypeRow,
  findEventType,
  findEventTypesOfTenants,
  insertEventType,
  listEventTypeRows,
  updateEventType,
  type EventTypeRow,
} from './store.js';

/** An event type as the API shows it (docs/api/events.md). */
export interface EventType {
  name: string;
  description: string | null;
  schema: Record<string, unknown> | null;
  deprecated: boolean;
  createdAt: string;
  updatedAt: string;
}

const toEventType = (row: EventTypeRow): EventType => ({
  name: row.name,
  description: row.description,
  schema: row.schema,
  deprecated: row.deprecated,
  createdAt: new Date(row.created_at).toISOString(),
  updatedAt: new Date(row.updated_at).toISOString(),
});

/** Facts for the audit row: never the schema itself, which may be large; whether there is one. */
const auditFacts = (row: EventTypeRow) => ({
  name: row.name,
  deprecated: row.deprecated,
  hasSchema: row.schema !== null,
});

const notFound = () => new HttpProblem('not_found', 'No such event type.');

export async function createEventType(
  db: Kysely<DB>,
  scope: TenantScope,
  origin: AuditOrigin,
  body: { name: string; description?: string; schema?: Record<string, unknown> | null; deprecated?: boolean },
): Promise<EventType> {
  const schema = body.schema ?? null;
  const validate = schema === null ? undefined : checkSchema(schema);
  const row: EventTypeRow = {
    tenant_id: scope.tenantId,
    name: body.name,
    description: body.description ?? null,
    schema,
    deprecated: body.deprecated ?? false,
    created_at: origin.at,
    updated_at: origin.at,
  };
  await db.transaction().execute(async (trx) => {
    if (!(await insertEventType(trx, scope, row))) {
      throw new HttpProblem('conflict', `An event type named ${body.name} exists already.`);
    }
    await recordAudit(trx, origin, {
      action: 'event_type.create',
      tenantId: scope.tenantId,
      targetType: 'event_type',
      targetId: row.name,
      metadata: auditFacts(row),
    });
  });
  if (validate) remember(row, validate);
  return toEventType(row);
}

export async function getEventType(db: Kysely<DB>, scope: TenantScope, name: string): Promise<EventType> {
  const row = await findEventType(db, scope, name);
  if (!row) throw notFound();
  return toEventType(row);
}

/**
 * Changes what the body names; `null` clears `description` or `schema`. The name cannot change: it is
 * what publishers send. `updatedAt` moves on every change, and with it every process's compiled copy.
 */
export async function patchEventType(
  db: Kysely<DB>,
  scope: TenantScope,
  origin: AuditOrigin,
  name: string,
  body: { description?: string | null; schema?: Record<string, unknown> | null; deprecated?: boolean },
): Promise<EventType> {
  // Nothing to change: nothing written, nothing audited, and no process's compiled copy dropped.
  if (Object.keys(body).length === 0) return getEventType(db, scope, name);
  const validate = body.schema ? checkSchema(body.schema) : undefined;
  const saved = await db.transaction().execute(async (trx) => {
    const row = await findEventType(trx, scope, name, { forUpdate: true });
    if (!row) throw notFound();
    // Two changes within one millisecond still differ in updated_at: the cache key (below) must move.
    const at = Math.max(origin.at.getTime(), new Date(row.updated_at).getTime() + 1);
    const updated: EventTypeRow = {
      ...row,
      description: body.description === undefined ? row.description : body.description,
      schema: body.schema === undefined ? row.schema : body.schema,
      deprecated: body.deprecated ?? row.deprecated,
      updated_at: new Date(at),
    };
    await updateEventType(trx, scope, updated);
    await recordAudit(trx, origin, {
      action: 'event_type.update',
      tenantId: scope.tenantId,
      targetType: 'event_type',
      targetId: name,
      metadata: { ...auditFacts(updated), changedFields: Object.keys(body).sort() },
    });
    return updated;
  });
  if (validate) remember(saved, validate);
  return toEventType(saved);
}

export async function deleteEventType(
  db: Kysely<DB>,
  scope: TenantScope,
  origin: AuditOrigin,
  name: string,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const row = await findEventType(trx, scope, name, { forUpdate: true });
    if (!row) throw notFound();
    await deleteEventTypeRow(trx, scope, name);
    await recordAudit(trx, origin, {
      action: 'event_type.delete',
      tenantId: scope.tenantId,
      targetType: 'event_type',
      targetId: name,
      metadata: auditFacts(row),
    });
  });
}

// The list is by name, ascending (a catalog is read as an index, as Svix's is): its cursor is the last
// name of the page, signed for the tenant's catalog as every list's cursor is (http/pagination.ts).
const NAME = /^[a-z0-9_.-]{1,100}$/;

function decodeNameCursor(cursor: string | undefined, binding: CursorBinding): string | undefined {
  if (cursor === undefined) return undefined;
  const [name = ''] = decodePosition(cursor, 1, binding);
  if (!NAME.test(name)) throw notThisListsCursor();
  return name;
}

export async function listEventTypes(
  db: Kysely<DB>,
  keyring: Keyring,
  scope: TenantScope,
  query: { limit?: number; cursor?: string },
): Promise<{ data: EventType[]; nextCursor: string | null }> {
  const limit = query.limit ?? 20;
  const binding: CursorBinding = { keyring, list: ['event-types', scope.tenantId] };
  const rows = await listEventTypeRows(db, scope, limit, decodeNameCursor(query.cursor, binding));
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    data: page.map(toEventType),
    nextCursor: rows.length > limit && last ? encodePosition([last.name], binding) : null,
  };
}

// Compiled validators, per process, keyed by tenant and name and checked against the row's
// `updated_at`: every publish reads its types' rows, so a change made in any process is used from the
// next publish on in every process, and a validator is compiled once per process per version.
// The least recently used goes first past the bound.
const compiled = new Map<string, { version: number; validate: ValidateFunction }>();
const CACHE_LIMIT = 1_000;

const cacheKey = (row: EventTypeRow) => `${row.tenant_id}\u0000${row.name}`;

/** The process that saved a schema has compiled it already: its next publish need not again. */
function remember(row: EventTypeRow, validate: ValidateFunction): void {
  if (compiled.size >= CACHE_LIMIT) compiled.delete(compiled.keys().next().value ?? '');
  compiled.set(cacheKey(row), { version: new Date(row.updated_at).getTime(), validate });
}

function validatorOf(row: EventTypeRow, schema: Record<string, unknown>): ValidateFunction {
  const key = cacheKey(row);
  const version = new Date(row.updated_at).getTime();
  const cached = compiled.get(key);
  compiled.delete(key);
  if (cached?.version === version) {
    compiled.set(key, cached);
    return cached.validate;
  }
  // A stored schema passed these checks when it was saved: they can refuse it again only if the
  // bounds were tightened since, and then its events are refused until the type is edited.
  const validate = checkSchema(schema);
  remember(row, validate);
  return validate;
}

type Ask = {
  scope: TenantScope;
  names: readonly string[];
  done: (rows: EventTypeRow[] | Error) => void;
};

// Publishes' reads of their types, batched per turn of the event loop (db/turn-batch.ts): one
// statement for every publish of the turn, whatever their tenants, rather than one round trip each,
// which halved the publish rate (docs/benchmarks.md). Each read still starts after its publish
// arrived, so a type changed before a publish, in any process, is what that publish is checked by.
const readers = new WeakMap<Kysely<DB>, (scope: TenantScope, names: string[]) => Promise<EventTypeRow[]>>();

function readerOf(db: Kysely<DB>) {
  let reader = readers.get(db);
  if (reader) return reader;
  const batcher = createTurnBatcher<Ask>({
    maxBatch: 256,
    maxInFlight: 2,
    write: async (asks) => {
      let rows: EventTypeRow[] | Error;
      try {
        rows = await findEventTypesOfTenants(db, asks);
      } catch (error) {
        rows = error instanceof Error ? error : new Error(String(error));
      }
      for (const ask of asks) {
        ask.done(rows instanceof Error ? rows : rows.filter((row) => row.tenant_id === ask.scope.tenantId));
      }
    },
  });
  reader = (scope, names) =>
    names.length === 0
      ? Promise.resolve([])
      : new Promise((resolve, reject) => {
          batcher.push({
            scope,
            names,
            done: (rows) => (rows instanceof Error ? reject(rows) : resolve(rows)),
          });
        });
  readers.set(db, reader);
  return reader;
}

/** What the catalog says of one event at publish: its 400, or the warnings its answer carries. */
export type EventTypeVerdict = HttpProblem | string[];

/**
 * The catalog's verdict on events about to be published (docs/api/events.md): a type with a schema
 * checks `data` (a mismatch is that event's `400 validation_failed`, paths from `/data`), a deprecated
 * type adds a warning, and an unregistered type passes. One query for all the events' types; call it
 * right before the events are written.
 */
export async function eventTypeVerdicts(
  db: Kysely<DB>,
  scope: TenantScope,
  types: readonly string[],
): Promise<Verdicts> {
  const rows = await readerOf(db)(scope, [...new Set(types)]);
  const byName = new Map(rows.map((row) => [row.name, row]));
  const verdicts = Object.assign(
    (type: string, data: unknown): EventTypeVerdict => {
      const row = byName.get(type);
      if (!row) return [];
      if (row.schema !== null) {
        const problem = validateData(validatorOf(row, row.schema), data);
        verdicts.work += lastValidationWork();
        if (problem) return problem;
      }
      return row.deprecated ? [`event type ${type} is deprecated`] : [];
    },
    { work: 0 },
  );
  return verdicts;
}

/** The catalog's verdict per event, and the validation work done so far (schemas.ts's units). */
type Verdicts = ((type: string, data: unknown) => EventTypeVerdict) & { work: number };

// A batch's checks give the event loop back after this much validation work (a few milliseconds), or
// this much time (pattern matches are bounded by a clock, not the count: docs/decisions/0061), so that
// a batch of 100 events each near the bound never holds other requests for longer than that.
const YIELD_EVERY_WORK = 300_000;
const YIELD_EVERY_MS = 5;

/** The catalog's check of one event published alone: its warnings, or its 400 thrown. */
export async function checkEventType(
  db: Kysely<DB>,
  scope: TenantScope,
  type: string,
  data: unknown,
): Promise<string[]> {
  const verdict = (await eventTypeVerdicts(db, scope, [type]))(type, data);
  if (verdict instanceof HttpProblem) throw verdict;
  return verdict;
}

/** An answer with the catalog's warnings, when there are any (`"warnings"` is absent otherwise). */
export const withWarnings = <T extends object>(answer: T, warnings: readonly string[] | undefined) =>
  warnings && warnings.length > 0 ? { ...answer, warnings: [...warnings] } : answer;

/**
 * The catalog's checks for a batch (docs/api/events.md), one query for all its types: `check` throws
 * an event's 400 (that event alone is refused) and keeps its warnings, which `answer` adds to its answer.
 */
export async function batchCatalog(db: Kysely<DB>, scope: TenantScope, items: readonly unknown[]) {
  const types = items
    .map((item) =>
      typeof item === 'object' && item !== null ? (item as { type?: unknown }).type : undefined,
    )
    .filter((type): type is string => typeof type === 'string');
  const verdictOf = await eventTypeVerdicts(db, scope, types);
  const warningsAt = new Map<number, string[]>();
  let yieldedAt = 0;
  let yieldedAtMs = performance.now();
  return {
    /** Lets other requests run when this batch's checks have worked long enough since it last did. */
    async pause(): Promise<void> {
      const now = performance.now();
      if (verdictOf.work - yieldedAt < YIELD_EVERY_WORK && now - yieldedAtMs < YIELD_EVERY_MS) return;
      await new Promise((resolve) => setImmediate(resolve));
      yieldedAt = verdictOf.work;
      yieldedAtMs = performance.now();
    },
    check(index: number, type: string, data: unknown): void {
      const verdict = verdictOf(type, data);
      if (verdict instanceof HttpProblem) throw verdict;
      if (verdict.length > 0) warningsAt.set(index, verdict);
    },
    answer: <T extends object>(index: number, answer: T) =>
      'error' in answer ? answer : withWarnings(answer, warningsAt.get(index)),
  };
}
