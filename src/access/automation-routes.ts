import { Type } from 'typebox';
import { Nullable, Timestamp } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { LEVELS, roleLevel } from './catalog.js';
import { decide, effectiveScopes } from './decide.js';
import type { Principal } from './principal.js';
import { anyTenantRule, scopeOf } from './rules.js';

// Either module's READER scope opens discovery (docs/api/authentication.md).
const discovery = anyTenantRule([
  { module: 'integrations', level: 'READER' },
  { module: 'integration_hub', level: 'READER' },
]);

function scopesOf(principal: Principal): string[] {
  if (principal.kind === 'tenant_key') return effectiveScopes(principal.scopes, principal.entitlements);
  if (principal.kind !== 'session') return [];
  const top = LEVELS.indexOf(roleLevel(principal.role));
  return principal.entitlements.flatMap((module) =>
    LEVELS.slice(0, top + 1).map((level) => `${module}:${level}`),
  );
}

let formattedAt = Number.NaN;
let formatted = '';

/**
 * `at` as an ISO timestamp, formatted once per millisecond: a busy server answers several health
 * checks within one, and formatting a date was a measurable part of this cheap route (docs/benchmarks.md).
 */
function timestamp(at: Date): string {
  const ms = at.getTime();
  if (ms !== formattedAt) {
    formatted = at.toISOString();
    formattedAt = ms;
  }
  return formatted;
}

/** Health and capabilities for automation (docs/api/authentication.md), computed from the routes' own rules. */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const automationRoutes: RoutePlugin = async (app, services) => {
  const { ctx } = services;
  const tags = ['automation'];
  app.get(
    '/api/v1/automation/health',
    {
      config: discovery,
      schema: {
        tags,
        summary: 'Lightweight health check for monitors',
        response: { 200: Type.Object({ status: Type.Literal('ok'), time: Timestamp }) },
      },
    },
    // Not async: there is nothing to wait for, and a promise per request is work on the hot path.
    () => ({ status: 'ok' as const, time: timestamp(ctx.now()) }),
  );

  app.get(
    '/api/v1/automation/capabilities',
    {
      config: discovery,
      schema: {
        tags,
        summary: 'The allowlisted routes and scopes effective for the presented key',
        response: {
          200: Type.Object({
            key: Nullable(
              Type.Object({
                id: Type.String(),
                prefix: Type.String(),
                scopes: Type.Array(Type.String()),
                expiresAt: Timestamp,
              }),
            ),
            tenantId: Type.String(),
            effectiveScopes: Type.Array(Type.String()),
            routes: Type.Array(
              Type.Object({ method: Type.String(), path: Type.String(), scope: Type.String() }),
            ),
          }),
        },
      },
    },
    async (request) => {
      const principal = request.principal;
      if (!principal || principal.kind === 'platform_key')
        throw new Error('gate let a non-tenant caller through');
      const routes = app.declaredRoutes.flatMap((route) => {
        if (route.method === 'HEAD' || route.access.class !== 'tenant' || !route.access.automation) return [];
        const decision = decide(route.access, principal);
        return decision.allowed && decision.via
          ? [{ method: route.method, path: route.url, scope: scopeOf(decision.via) }]
          : [];
      });
      return {
        key:
          principal.kind === 'tenant_key'
            ? {
                id: principal.keyId,
                prefix: principal.prefix,
                scopes: principal.scopes,
                expiresAt: principal.expiresAt.toISOString(),
              }
            : null,
        tenantId: principal.tenantId,
        effectiveScopes: scopesOf(principal),
        routes,
      };
    },
  );
};
