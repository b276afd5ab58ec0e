import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../context.js';

/** First-run setup (contract §13): GET and POST /api/v1/setup. */
export function setupRoutes(_ctx: AppContext): FastifyPluginAsyncTypebox {
  return async () => {};
}
