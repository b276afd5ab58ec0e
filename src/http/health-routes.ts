import { Type } from 'typebox';
import type { Database } from '../db/database.js';
import { timedPing } from '../db/ping.js';
import type { RoutePlugin } from '../services.js';
import { HttpProblem } from './problem.js';

const READY_TIMEOUT_MS = 2_000;

/**
 * A ping that every caller arriving while one is in flight shares: a burst of readiness checks
 * from many addresses must not take a pooled connection per request (docs/api/limits.md).
 */
function sharedPing(ctx: { database: Database }): () => Promise<number> {
  let inFlight: Promise<number> | undefined;
  return () =>
    (inFlight ??= timedPing(ctx.database, READY_TIMEOUT_MS).finally(() => {
      inFlight = undefined;
    }));
}

/** Liveness and readiness for load balancers and orchestrators (docs/operators/deployment.md); no credential. */
export const healthRoutes: RoutePlugin = async (app, services) => {
  const { ctx } = services;
  const ping = sharedPing(ctx);
  app.get(
    '/healthz',
    {
      // No database work: probes may call it as often as they like.
      config: { access: { class: 'public', unlimited: true } },
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
      // A ping per request: limited per client address like any unauthenticated request, so a
      // flood from one address costs no database work once its allowance is spent (docs/api/limits.md).
      config: { access: { class: 'public' } },
      schema: {
        tags: ['health'],
        summary: 'The database is reachable',
        response: { 200: Type.Object({ status: Type.Literal('ok'), database: Type.Literal('ok') }) },
      },
    },
    async () => {
      try {
        await ping();
      } catch {
        throw new HttpProblem('unavailable', 'The database is unavailable.', {
          headers: { 'retry-after': '5' },
        });
      }
      return { status: 'ok' as const, database: 'ok' as const };
    },
  );
};
