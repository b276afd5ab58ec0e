// The platform API's shapes (contract §9, §12), type-only from the server where it exports them.
import type { Static } from 'typebox';
import type { FiringAlert } from '../../../src/platform/alerting/alerts-store.js';
import type { HistorySchema } from '../../../src/platform/monitoring-routes.js';
import type { MonitoringSnapshot } from '../../../src/platform/monitoring.js';
import type { Tenant, User } from '../../../src/tenants/tenants.js';

export type { FiringAlert, MonitoringSnapshot, Tenant, User };

/** GET /api/v1/platform/monitoring/history (contract §12): one point per minute, oldest first. */
export type MonitoringHistory = Static<typeof HistorySchema>;
export type HistoryPoint = MonitoringHistory['points'][number];

/** GET /api/v1/platform/alerting/alerts: what fires now. */
export interface FiringAlerts {
  data: FiringAlert[];
  truncated: boolean;
}

/** The modules a tenant can be entitled to and the roles a user can have (contract §4). */
export const MODULES = ['integrations', 'integration_hub'] as const;
export const ROLES = ['COMPANY_IT_ADMIN', 'EXECUTIVE', 'PLATFORM_ADMIN', 'MEMBER'] as const;
