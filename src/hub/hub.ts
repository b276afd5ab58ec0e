import { MODULE_KEYS } from '../access/catalog.js';
import type { TenantScope } from '../access/scope.js';
import {
  countConnections,
  countConnectionsByConnector,
  type ConnectionDeps,
} from '../connections/connections.js';
import type { ConnectorDefinition } from '../connections/connector.js';
import { deliveryCounts24h } from '../delivery/event-log.js';

/** Why a connector cannot take credentials now (credential readiness `reasons`). */
export type NotReadyReason = 'entitlement_missing' | 'connector_disabled' | 'no_active_connection';

export interface FieldInfo {
  name: string;
  type: string;
  required: boolean;
  description: string | null;
  format: string | null;
  options: string[] | null;
  default: string | null;
}

/** A connector's fields as the catalog shows them (the connect page too, docs/api/connect-links.md). */
export function fieldsOf(schema: ConnectorDefinition['config']): FieldInfo[] {
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  return Object.entries(schema.properties).map(([name, property]) => {
    const p = property as {
      type?: string;
      format?: string;
      anyOf?: Array<{ const?: unknown; type?: string }>;
      description?: string;
      default?: unknown;
    };
    // A union of constants (the http connector's method, MQTT's QoS) is a choice among those values,
    // listed as text: `type` says a number's (qos: 1 or 2) is sent as a number.
    const options = p.anyOf
      ?.map((branch) => branch.const)
      .filter((v) => typeof v === 'string' || typeof v === 'number')
      .map(String);
    return {
      name,
      // A value or null (maxPerSecond) is of the value's type.
      type:
        p.type ?? p.anyOf?.find((b) => b.type && b.type !== 'null')?.type ?? (p.anyOf ? 'string' : 'unknown'),
      required: required.has(name),
      description: p.description ?? null,
      format: p.format ?? null,
      options: options && options.length > 0 ? options : null,
      default: typeof p.default === 'string' || typeof p.default === 'number' ? String(p.default) : null,
    };
  });
}

export function credentialFieldsOf(definition: ConnectorDefinition) {
  return fieldsOf(definition.credentials).map((field) => ({
    ...field,
    generated: Boolean(definition.generated?.[field.name]),
  }));
}

/** The catalog as `GET /integration-hub/connectors` shows it, read from the definitions themselves. */
export async function describeConnectors(deps: ConnectionDeps) {
  // Providers are made at run time, maybe by another process (docs/api/oauth.md).
  await deps.catalog.refreshFamilies();
  return deps.catalog.all.map((definition) => ({
    connectorKey: definition.key,
    name: definition.name,
    description: definition.description,
    enabled: deps.catalog.isEnabled(definition.key),
    configFields: fieldsOf(definition.config),
    credentialFields: credentialFieldsOf(definition),
    eventTypes: [...definition.acceptedEventTypes],
    rebindOverlapSeconds: definition.rebindOverlapSeconds,
    ...(definition.authorization ? { oauth2: { grant: definition.authorization.grant } } : {}),
    ...(definition.broker ? { broker: { signatureCarrier: definition.broker.signatureCarrier } } : {}),
  }));
}

/** Hub overview (docs/api/connections.md) for the tenant of the scope; counts only, never a secret. */
export async function hubOverview(deps: ConnectionDeps, scope: TenantScope) {
  const { entitlements } = scope;
  const countsOf = await countConnectionsByConnector(deps.ctx.db, scope);
  await deps.catalog.refreshFamilies();
  const connectors = deps.catalog.all.map((definition) => ({
    connectorKey: definition.key,
    name: definition.name,
    ...countsOf(definition.key),
  }));
  const active = connectors.reduce((sum, c) => sum + c.active, 0);
  const disabled = connectors.reduce((sum, c) => sum + c.disabled, 0);
  const awaiting = connectors.reduce((sum, c) => sum + c.awaitingCredentials, 0);
  const deliveries24h = await deliveryCounts24h(deps.ctx.db, scope, deps.ctx.now());
  return {
    tenantId: scope.tenantId,
    // Degraded: some active connection cannot deliver (no credentials) or a delivery failed lately.
    status: awaiting > 0 || deliveries24h.failed > 0 ? ('degraded' as const) : ('healthy' as const),
    modules: MODULE_KEYS.map((moduleKey) => ({ moduleKey, entitled: entitlements.includes(moduleKey) })),
    connectors,
    // Every connection, paused ones too: a tenant whose connections are all paused has connections.
    totals: { connections: await countConnections(deps.ctx.db, scope), active, disabled },
    deliveries24h,
  };
}

/** Credential readiness (docs/api/connections.md): per connector, whether credentials can be bound now and why not. */
export async function credentialReadiness(deps: ConnectionDeps, scope: TenantScope) {
  const { entitlements } = scope;
  const countsOf = await countConnectionsByConnector(deps.ctx.db, scope);
  await deps.catalog.refreshFamilies();
  return {
    connectors: deps.catalog.all.map((definition) => {
      const c = countsOf(definition.key);
      const reasons: NotReadyReason[] = [];
      // Binding is an integrations:ADMIN action: without the module, nothing can be bound.
      if (!entitlements.includes('integrations')) reasons.push('entitlement_missing');
      if (!deps.catalog.isEnabled(definition.key)) reasons.push('connector_disabled');
      if (c.active === 0) reasons.push('no_active_connection');
      return {
        connectorKey: definition.key,
        name: definition.name,
        ready: reasons.length === 0,
        reasons,
        credentialFields: credentialFieldsOf(definition).map(({ name, generated }) => ({ name, generated })),
        connectionsAwaitingCredentials: c.awaitingCredentials,
      };
    }),
  };
}
