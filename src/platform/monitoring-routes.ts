import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../context.js';

/** GET /api/v1/platform/monitoring and GET /metrics (contract §1, §9). */
export function monitoringRoutes(_ctx: AppContext): FastifyPluginAsyncTypebox {
  return async () => {};
}
