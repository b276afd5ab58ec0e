import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../context.js';
import { timedPing } from '../db/ping.js';
import { HttpProblem } from './problem.js';

const READY_TIMEOUT_MS = 2_000;

/** Liveness and readiness for load balancers and orchestrators (contract §1); no credential. */
export function healthRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    const pub = { access: { class: 'public', unlimited: true } } as const;
    app.get(
      '/healthz',
      {
        config: pub,
        schema: {
          tags: ['health'],
          summary: 'The process is up',
          response: { 200: Type.Object({ status: Type.Literal('ok') }) },
        },
      },
      async () => ({ status: 'ok' as const }),
    );
    app.get(
      '/readyz',
      {
        config: pub,
        schema: {
          tags: ['health'],
          summary: 'The database is reachable',
          response: { 200: Type.Object({ status: Type.Literal('ok'), database: Type.Literal('ok') }) },
        },
      },
      async () => {
        try {
          await timedPing(ctx.database, READY_TIMEOUT_MS);
        } catch {
          throw new HttpProblem('unavailable', 'The database is unavailable.', {
            headers: { 'retry-after': '5' },
          });
        }
        return { status: 'ok' as const, database: 'ok' as const };
      },
    );
  };
}
