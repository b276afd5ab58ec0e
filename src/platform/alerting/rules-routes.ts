import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';

/** The alert routing document (contract §9). */
export function alertRulesRoutes(_ctx: AppContext): FastifyPluginAsyncTypebox {
  return async () => {};
}
