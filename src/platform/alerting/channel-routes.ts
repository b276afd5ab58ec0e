import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';

/** Alerting channels (contract §9). */
export function alertChannelRoutes(_ctx: AppContext): FastifyPluginAsyncTypebox {
  return async () => {};
}
