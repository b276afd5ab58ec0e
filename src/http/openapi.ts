import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { VERSION } from '../version.js';
import { ProblemSchema } from './schemas.js';

/**
 * OpenAPI 3.1 generated from the same route schemas that validate requests; served as JSON at
 * /api/v1/openapi.json and as a browsable page at /docs. Register before any route.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  app.addSchema(ProblemSchema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'hubgate',
        version: VERSION,
        description:
          'Integration hub and automation access. Errors are RFC 9457 problem details (application/problem+json) with a stable `code`.',
      },
      components: {
        securitySchemes: {
          platformKey: { type: 'http', scheme: 'bearer', description: 'Platform operator key, `plt_…`' },
          tenantKey: { type: 'http', scheme: 'bearer', description: 'Tenant automation key, `tnt_…`' },
          session: { type: 'apiKey', in: 'cookie', name: 'svc_access', description: 'Browser session' },
        },
      },
    },
    hideUntagged: false,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get(
    '/api/v1/openapi.json',
    { config: { access: { class: 'public', unlimited: true } }, schema: { hide: true } },
    async () => app.swagger(),
  );
}
