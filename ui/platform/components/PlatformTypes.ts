// The platform API's shapes (contract §9, §12), type-only from the server where it exports them.
import type { MonitoringSnapshot } from '../../../src/platform/monitoring.js';
import type { Tenant, User } from '../../../src/tenants/tenants.js';

export type { MonitoringSnapshot, Tenant, User };

/**
 * GET /api/v1/platform/monitoring/history (contract §12): one point per minute, oldest first, the
 * last one the current (partial) minute. Written from the contract; the route's schema is not
 * exported for the UI to import.
 */
export interface HistoryPoint {
  at: string;
  delivered: number;
  failed: number;
  latencyMs: { p50: number | null; p95: number | null; p99: number | null };
  queueDepth: number | null;
}

export interface MonitoringHistory {
  bucketSeconds: number;
  points: HistoryPoint[];
}

/** The modules a tenant can be entitled to and the roles a user can have (contract §4). */
export const MODULES = ['integrations', 'integration_hub'] as const;
export const ROLES = ['COMPANY_IT_ADMIN', 'EXECUTIVE', 'PLATFORM_ADMIN', 'MEMBER'] as const;
