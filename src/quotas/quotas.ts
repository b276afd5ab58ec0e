import { recordAudit, type AuditOrigin } from '../access/audit.js';
import type { AppContext } from '../context.js';
import { isIdOf } from '../crypto/ids.js';
import { notFound } from '../http/problem.js';
import { utcDayOf } from './book.js';
import {
  countEventsSince,
  countLiveConnections,
  findQuotaRow,
  forgetDays,
  tenantExists,
  upsertQuotaRow,
  type QuotaRow,
} from './store.js';

/** A tenant's quotas as the platform sets them (docs/api/quotas.md); null is no limit. */
export interface Quotas {
  eventsPerDay: number | null;
  connections: number | null;
  requestsPerMinute: number | null;
  retentionDays: number | null;
}

/** The quotas, and what the tenant uses of those that count: today's events (UTC) and its connections. */
export type QuotasAnswer = Quotas & { usage: { eventsToday: number; connections: number } };

const toQuotas = (row: QuotaRow | undefined): Quotas => ({
  eventsPerDay: row?.events_per_day ?? null,
  connections: row?.connections ?? null,
  requestsPerMinute: row?.requests_per_minute ?? null,
  retentionDays: row?.retention_days ?? null,
});

async function existingTenant(ctx: AppContext, tenantId: string): Promise<void> {
  if (!isIdOf('ten', tenantId) || !(await tenantExists(ctx.db, tenantId))) throw notFound('tenant');
}

async function answerOf(ctx: AppContext, tenantId: string, quotas: Quotas): Promise<QuotasAnswer> {
  const [eventsToday, connections] = await Promise.all([
    countEventsSince(ctx.db, tenantId, utcDayOf(ctx.now()).start),
    countLiveConnections(ctx.db, tenantId),
  ]);
  return { ...quotas, usage: { eventsToday, connections } };
}

/** The tenant's quotas (all null when never set) and its usage; 404 for an unknown tenant. */
export async function getQuotas(ctx: AppContext, tenantId: string): Promise<QuotasAnswer> {
  await existingTenant(ctx, tenantId);
  return answerOf(ctx, tenantId, toQuotas(await findQuotaRow(ctx.db, tenantId)));
}

/**
 * Replaces the tenant's four quotas, audited with before and after. This process forgets its cached
 * quotas at once; other processes follow within QUOTA_CACHE_MS. A daily events quota set where there
 * was none counts the day afresh from the events rows, so a quota set mid-day counts what came before.
 */
export async function setQuotas(
  ctx: AppContext,
  origin: AuditOrigin,
  tenantId: string,
  quotas: Quotas,
): Promise<QuotasAnswer> {
  await existingTenant(ctx, tenantId);
  await ctx.db.transaction().execute(async (trx) => {
    const before = toQuotas(await findQuotaRow(trx, tenantId));
    if (before.eventsPerDay === null) await forgetDays(trx, tenantId);
    await upsertQuotaRow(
      trx,
      tenantId,
      {
        events_per_day: quotas.eventsPerDay,
        connections: quotas.connections,
        requests_per_minute: quotas.requestsPerMinute,
        retention_days: quotas.retentionDays,
      },
      origin.at,
    );
    await recordAudit(trx, origin, {
      action: 'tenant.quotas.update',
      tenantId,
      targetType: 'tenant',
      targetId: tenantId,
      metadata: { before, after: quotas },
    });
  });
  ctx.quotas.forget(tenantId);
  return answerOf(ctx, tenantId, quotas);
}
