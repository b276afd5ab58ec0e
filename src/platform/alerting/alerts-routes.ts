import { Type } from 'typebox';
import { platformRule } from '../../access/rules.js';
import { StrictObject, Timestamp } from '../../http/schemas.js';
import type { RoutePlugin } from '../../services.js';
import { firingAlerts } from './alerts-store.js';

const MAX_FIRING = 200;

const FiringAlertSchema = Type.Object({
  fingerprint: Type.String(),
  labels: Type.Record(Type.String(), Type.String()),
  annotations: Type.Record(Type.String(), Type.String()),
  startsAt: Timestamp,
});

/** The answer of `GET /api/v1/platform/alerting/alerts`: at most MAX_FIRING alerts, and whether more fire. */
export const FiringAlerts = Type.Object({ data: Type.Array(FiringAlertSchema), truncated: Type.Boolean() });

/**
 * The alerts firing now, as Alertmanager's `GET /api/v2/alerts?active=true` lists them: what the
 * operator console shows beside the charts. An addition of ours to the platform routes
 * (docs/operators/alerting.md); platform keys only, like the other alerting routes.
 */
export const alertsRoutes: RoutePlugin = async (app, services) => {
  const { ctx } = services;
  app.get(
    '/api/v1/platform/alerting/alerts',
    {
      config: platformRule(),
      schema: {
        tags: ['platform: alerting'],
        summary: 'The alerts firing now, the most recent first',
        description: `At most ${MAX_FIRING}; \`truncated\` says whether more are firing.`,
        querystring: StrictObject({}),
        response: { 200: FiringAlerts },
      },
    },
    async () => {
      const alerts = await firingAlerts(ctx.db, MAX_FIRING + 1);
      return { data: alerts.slice(0, MAX_FIRING), truncated: alerts.length > MAX_FIRING };
    },
  );
};
