import { Type } from 'typebox';
import { sessionRule, tenantRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import { Nullable, PageOf } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { credentialReadiness, describeConnectors, hubOverview } from './hub.js';
import { BrokerSchema } from './schemas.js';

const Field = Type.Object({
  name: Type.String(),
  type: Type.String(),
  required: Type.Boolean(),
  description: Nullable(Type.String()),
  format: Nullable(Type.String({ description: 'e.g. uri' })),
  options: Nullable(
    Type.Array(Type.String(), {
      description: 'the values allowed, when they are few, as text (a number field takes them as numbers)',
    }),
  ),
  default: Nullable(
    Type.String({ description: 'what an optional field means when left out, as text (as options)' }),
  ),
});

export const ConnectorSchema = Type.Object({
  connectorKey: Type.String(),
  name: Type.String(),
  description: Type.String(),
  enabled: Type.Boolean({ description: 'false when the platform switched the connector off' }),
  configFields: Type.Array(Field),
  credentialFields: Type.Array(Type.Intersect([Field, Type.Object({ generated: Type.Boolean() })])),
  eventTypes: Type.Array(Type.String()),
  rebindOverlapSeconds: Type.Integer({
    minimum: 0,
    description: 'how long the previous credentials keep working after new ones are bound',
  }),
  oauth2: Type.Optional(
    Type.Object(
      { grant: Type.Union([Type.Literal('authorization_code'), Type.Literal('client_credentials')]) },
      {
        description:
          'an OAuth2 connector (oauth2:<provider>) only: how its connections get tokens (docs/api/oauth.md)',
      },
    ),
  ),
  broker: Type.Optional(BrokerSchema),
});

const Count = Type.Integer({ minimum: 0 });

export const OverviewSchema = Type.Object({
  tenantId: Type.String(),
  status: Type.Union([Type.Literal('healthy'), Type.Literal('degraded')]),
  modules: Type.Array(Type.Object({ moduleKey: Type.String(), entitled: Type.Boolean() })),
  connectors: Type.Array(
    Type.Object({
      connectorKey: Type.String(),
      name: Type.String(),
      active: Count,
      disabled: Count,
      awaitingCredentials: Count,
    }),
  ),
  totals: Type.Object({ connections: Count, active: Count, disabled: Count }),
  deliveries24h: Type.Object({ delivered: Count, failed: Count, pending: Count }),
});

export const ReadinessSchema = Type.Object({
  connectors: Type.Array(
    Type.Object({
      connectorKey: Type.String(),
      name: Type.String(),
      ready: Type.Boolean(),
      reasons: Type.Array(
        Type.String({ description: 'entitlement_missing, connector_disabled or no_active_connection' }),
      ),
      credentialFields: Type.Array(Type.Object({ name: Type.String(), generated: Type.Boolean() })),
      connectionsAwaitingCredentials: Count,
    }),
  ),
});

const hubReader = tenantRule('integration_hub', 'READER');
const tags = ['integration hub'];

/** The connector catalog, hub overview and credential readiness (docs/api/connections.md). */
export const hubRoutes: RoutePlugin = async (app, deps) => {
  app.get(
    '/api/v1/integration-hub/connectors',
    {
      config: sessionRule(undefined, { portal: 'read' }),
      schema: {
        tags,
        summary: 'The connector catalog: fields, credential fields and event types of each connector',
        response: { 200: PageOf(ConnectorSchema) },
      },
    },
    async () => ({ data: await describeConnectors(deps), nextCursor: null }),
  );

  app.get(
    '/api/v1/integration-hub/overview',
    {
      config: {
        ...hubReader,
        mcp: {
          tool: 'hub_overview',
          part: 'overview',
          annotations: { readOnlyHint: true, idempotentHint: true },
        },
      },
      schema: {
        tags,
        summary: "The tenant's connectors and hub status",
        response: { 200: OverviewSchema },
      },
    },
    async (request) => hubOverview(deps, requestScope(request)),
  );

  app.get(
    '/api/v1/integration-hub/credential-readiness',
    {
      config: {
        ...hubReader,
        mcp: {
          tool: 'hub_overview',
          part: 'credentialReadiness',
          annotations: { readOnlyHint: true, idempotentHint: true },
        },
      },
      schema: {
        tags,
        summary: 'Which connectors can take credentials now, and why not (no secret values)',
        response: { 200: ReadinessSchema },
      },
    },
    async (request) => credentialReadiness(deps, requestScope(request)),
  );
};
