import { recordAudit, type AuditOrigin } from '../access/audit.js';
import type { TenantScope } from '../access/scope.js';
import type { AppContext } from '../context.js';
import { newId } from '../crypto/ids.js';
import { listPage, type Page, type PageQuery } from '../http/pagination.js';
import { fieldProblem, notFound } from '../http/problem.js';
import type { SchemeConfig } from './scheme.js';
import { schemeOf } from './schemes/index.js';
import {
  deleteSource,
  findSource,
  insertSource,
  listSources,
  updateSource,
  type SourceRow,
} from './store.js';

// A tenant's sources (docs/api/sources.md): create, read, edit, pause, delete, rotate the secret.
// The secret is write-only: sealed at rest, shown once when hubgate made it, never read back.

export const DEFAULT_MAX_PER_SECOND = 50;
const MAX_OVERLAP_SECONDS = 86_400;

export interface SourceRecord {
  id: string;
  name: string;
  scheme: string;
  typePrefix: string;
  ingestUrl: string;
  status: 'active' | 'paused';
  maxPerSecond: number;
  createdAt: string;
  updatedAt: string;
  /** Until when the previous secret still verifies (a rotation's overlap); null when none does. */
  previousSecretValidUntil: string | null;
  [field: string]: unknown;
}

export interface CreateSourceBody {
  name: string;
  scheme: string;
  secret?: string;
  typePrefix?: string;
  maxPerSecond?: number;
  [field: string]: unknown;
}

const BASE_FIELDS = new Set(['name', 'scheme', 'secret', 'typePrefix', 'maxPerSecond', 'status']);

export const ingestUrlOf = (publicUrl: URL, id: string): string => new URL(`/ingest/${id}`, publicUrl).href;

export function recordOf(publicUrl: URL, row: SourceRow, now: Date): SourceRecord {
  const overlap = row.previous_valid_until ? new Date(row.previous_valid_until) : null;
  return {
    id: row.id,
    name: row.name,
    scheme: row.scheme,
    typePrefix: row.type_prefix,
    ingestUrl: ingestUrlOf(publicUrl, row.id),
    status: row.status,
    maxPerSecond: row.max_per_second,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
    previousSecretValidUntil: overlap && overlap > now ? overlap.toISOString() : null,
    ...row.config,
  };
}

/**
 * The scheme's own fields of a body, checked: a field of another scheme is refused (a source of
 * scheme `stripe` has no `signatureHeader`), and the `hmac` scheme's required ones must be there.
 */
function schemeFields(
  schemeName: string,
  body: Record<string, unknown>,
  current: SchemeConfig = {},
): Record<string, unknown> {
  const scheme = schemeOf(schemeName);
  if (!scheme) throw fieldProblem('scheme', 'is not a scheme hubgate knows');
  const config: Record<string, unknown> = { ...current };
  for (const [name, value] of Object.entries(body)) {
    if (BASE_FIELDS.has(name)) continue;
    if (!Object.hasOwn(scheme.fields, name))
      throw fieldProblem(name, `is not a field of the ${schemeName} scheme`);
    config[name] = value;
  }
  for (const [name, field] of Object.entries(scheme.fields)) {
    const optional = (field as { '~optional'?: boolean })['~optional'] === true;
    if (!optional && config[name] === undefined)
      throw fieldProblem(name, `is required by the ${schemeName} scheme`);
  }
  return config;
}

/** The secret given, checked against its scheme, or one made when the scheme makes them. */
function secretFor(schemeName: string, given: string | undefined): { secret: string; generated: boolean } {
  const scheme = schemeOf(schemeName);
  if (!scheme) throw fieldProblem('scheme', 'is not a scheme hubgate knows');
  if (given === undefined) {
    if (!scheme.generateSecret)
      throw fieldProblem('secret', `is required by the ${schemeName} scheme (the provider gives it)`);
    return { secret: scheme.generateSecret(), generated: true };
  }
  const problem = scheme.secretProblem?.(given);
  if (problem) throw fieldProblem('secret', problem);
  return { secret: given, generated: false };
}

const sealSecret = (ctx: AppContext, id: string, secret: string) =>
  ctx.keyring.seal('source-secrets', secret, id);

export async function createSource(
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  body: CreateSourceBody,
): Promise<SourceRecord & { secret?: string }> {
  const config = schemeFields(body.scheme, body);
  const { secret, generated } = secretFor(body.scheme, body.secret);
  const now = ctx.now();
  const id = newId('src');
  const row: SourceRow = {
    id,
    tenant_id: scope.tenantId,
    name: body.name,
    scheme: body.scheme,
    type_prefix: body.typePrefix ?? body.scheme,
    config,
    secret_sealed: sealSecret(ctx, id, secret),
    previous_secret_sealed: null,
    previous_valid_until: null,
    status: 'active',
    max_per_second: body.maxPerSecond ?? DEFAULT_MAX_PER_SECOND,
    created_at: now,
    updated_at: now,
  };
  await ctx.db.transaction().execute(async (trx) => {
    await insertSource(trx, scope, row);
    await recordAudit(trx, origin, {
      tenantId: scope.tenantId,
      action: 'source.create',
      targetType: 'source',
      targetId: id,
      metadata: { name: body.name, scheme: body.scheme },
    });
  });
  const record = recordOf(ctx.config.publicUrl, row, now);
  return generated ? { ...record, secret } : record;
}

export async function sourcesPage(
  ctx: AppContext,
  scope: TenantScope,
  query: PageQuery,
): Promise<Page<SourceRecord>> {
  const now = ctx.now();
  return listPage(
    query,
    'src',
    (limit, after) => listSources(ctx.db, scope, limit, after),
    (rows) => rows.map((row) => recordOf(ctx.config.publicUrl, row, now)),
    { keyring: ctx.keyring, list: ['sources', scope.tenantId] },
  );
}

export async function getSource(ctx: AppContext, scope: TenantScope, id: string): Promise<SourceRecord> {
  const row = await findSource(ctx.db, scope, id);
  if (!row) throw notFound('source');
  return recordOf(ctx.config.publicUrl, row, ctx.now());
}

export interface PatchSourceBody {
  name?: string;
  status?: 'active' | 'paused';
  typePrefix?: string;
  maxPerSecond?: number;
  [field: string]: unknown;
}

export async function editSource(
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  id: string,
  body: PatchSourceBody,
): Promise<SourceRecord> {
  const now = ctx.now();
  const row = await ctx.db.transaction().execute(async (trx) => {
    const current = await findSource(trx, scope, id);
    if (!current) throw notFound('source');
    const config = schemeFields(current.scheme, body, current.config);
    const updated = await updateSource(trx, scope, id, {
      name: body.name ?? current.name,
      status: body.status ?? current.status,
      type_prefix: body.typePrefix ?? current.type_prefix,
      max_per_second: body.maxPerSecond ?? current.max_per_second,
      config,
      updated_at: now,
    });
    await recordAudit(trx, origin, {
      tenantId: scope.tenantId,
      action: 'source.update',
      targetType: 'source',
      targetId: id,
      metadata: { changed: Object.keys(body).sort() },
    });
    return updated;
  });
  if (!row) throw notFound('source');
  return recordOf(ctx.config.publicUrl, row, now);
}

export async function removeSource(
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  id: string,
): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await deleteSource(trx, scope, id))) throw notFound('source');
    await recordAudit(trx, origin, {
      tenantId: scope.tenantId,
      action: 'source.delete',
      targetType: 'source',
      targetId: id,
    });
  });
}

export async function rotateSourceSecret(
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  id: string,
  body: { secret?: string; previousValidForSeconds?: number },
): Promise<SourceRecord & { secret?: string }> {
  const now = ctx.now();
  const overlap = Math.min(body.previousValidForSeconds ?? 0, MAX_OVERLAP_SECONDS);
  const result = await ctx.db.transaction().execute(async (trx) => {
    const current = await findSource(trx, scope, id);
    if (!current) throw notFound('source');
    const { secret, generated } = secretFor(current.scheme, body.secret);
    const updated = await updateSource(trx, scope, id, {
      secret_sealed: sealSecret(ctx, id, secret),
      previous_secret_sealed: overlap > 0 ? current.secret_sealed : null,
      previous_valid_until: overlap > 0 ? new Date(now.getTime() + overlap * 1000) : null,
      updated_at: now,
    });
    await recordAudit(trx, origin, {
      tenantId: scope.tenantId,
      action: 'source.rotate_secret',
      targetType: 'source',
      targetId: id,
      metadata: { previousValidForSeconds: overlap },
    });
    return { updated, secret, generated };
  });
  if (!result.updated) throw notFound('source');
  const record = recordOf(ctx.config.publicUrl, result.updated, now);
  return result.generated ? { ...record, secret: result.secret } : record;
}
