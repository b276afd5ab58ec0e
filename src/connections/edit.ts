import { recordAudit, type AuditOrigin } from '../access/audit.js';
import type { TenantScope } from '../access/scope.js';
import { HttpProblem, notFound } from '../http/problem.js';
import { bodyValidator } from '../http/validation.js';
import {
  checkUrlFields,
  connectionOr404,
  toConnection,
  type Connection,
  type ConnectionDeps,
  type DeliveryControl,
} from './connections.js';
import type { ConnectorDefinition } from './connector.js';
import { checkFilter } from './filter.js';
import { updateConnectionConfig, type ConnectionRow } from './store.js';

export type ConnectionEdit = { displayName?: string } & Record<string, unknown>;

const editValidators = new WeakMap<ConnectorDefinition, (value: unknown) => ConnectionEdit>();
const configValidators = new WeakMap<ConnectorDefinition, (value: unknown) => Record<string, unknown>>();

/** The edit body of this connector: the create body's fields but `connectorKey`, every one optional. */
function editValidator(definition: ConnectorDefinition, displayName: object) {
  let validate = editValidators.get(definition);
  if (!validate) {
    validate = bodyValidator<ConnectionEdit>({
      type: 'object',
      properties: { displayName, ...definition.config.properties },
      additionalProperties: false,
    });
    editValidators.set(definition, validate);
  }
  return validate;
}

/** The whole config after the edit, checked as a create would check it (required fields present). */
function configValidator(definition: ConnectorDefinition) {
  let validate = configValidators.get(definition);
  if (!validate) {
    validate = bodyValidator<Record<string, unknown>>({ ...definition.config, additionalProperties: false });
    configValidators.set(definition, validate);
  }
  return validate;
}

const hostOf = (value: unknown): string | null => {
  if (typeof value !== 'string') return null;
  try {
    return new URL(value).host;
  } catch {
    return null;
  }
};

/** The config field the bound credentials are sent to, if any (see `credentialsSentTo`). */
function sentToOf(
  definition: ConnectorDefinition,
  row: ConnectionRow,
  keyring: ConnectionDeps['ctx']['keyring'],
): string | undefined {
  const sentTo = definition.credentialsSentTo;
  if (typeof sentTo !== 'function') return sentTo;
  // Nothing bound, nothing sent.
  if (row.credentials_sealed === null) return undefined;
  const bound = JSON.parse(keyring.open('connection-credentials', row.credentials_sealed, row.id)) as Record<
    string,
    unknown
  >;
  return sentTo(bound);
}

/**
 * Edits a connection (docs/api/connections.md): its display name and config, the create body's shape with every
 * part optional; a field given as null is removed (the connector's default applies). URLs pass the
 * SSRF policy again. Queued deliveries go to the new URL from their next attempt (the worker reads
 * the config when it claims). When the host of the URL that receives the credentials changes, the
 * credentials are unbound in the same transaction: a secret is never sent to a host it was not given
 * for. The deliveries queued then are kept as a pause keeps them, `skipped`, and recover sends them
 * once credentials are bound again (see
 * docs/decisions/0064-queued-deliveries-keep-their-order-and-survive-a-new-host.md); an attempt already
 * under way ends at the old host, with the credentials given for it.
 */
export async function editConnection(
  deps: ConnectionDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  id: string,
  body: Record<string, unknown>,
  displayNameSchema: object,
  control: Pick<DeliveryControl, 'close'>,
): Promise<Connection> {
  let skipped = 0;
  const edited = await deps.ctx.db.transaction().execute(async (trx) => {
    const row = await connectionOr404(trx, scope, id, { forUpdate: true });
    if (row.status === 'disabled') {
      throw new HttpProblem('conflict', 'The connection is disabled; create a new one instead.');
    }
    const definition = await deps.catalog.resolve(row.connector_key);
    if (!definition) throw new HttpProblem('conflict', `The ${row.connector_key} connector is not known.`);
    const { displayName, ...changes } = editValidator(definition, displayNameSchema)(body);
    // Nothing to change: answered as it is, with no write and no audit entry.
    if (Object.keys(body).length === 0) return toConnection(row);
    const merged: Record<string, unknown> = { ...row.config, ...changes };
    for (const [field, value] of Object.entries(changes)) if (value === null) delete merged[field];
    const config = configValidator(definition)(merged);
    checkUrlFields(deps, definition, changes);
    checkFilter(changes.filter);
    const sentTo = sentToOf(definition, row, deps.ctx.keyring);
    const unbind =
      sentTo !== undefined &&
      row.credentials_sealed !== null &&
      hostOf(config[sentTo]) !== hostOf(row.config[sentTo]);
    const updated = await updateConnectionConfig(trx, scope, id, {
      display_name: displayName ?? row.display_name,
      config,
      ...(unbind
        ? { credentials_sealed: null, previous_credentials_sealed: null, previous_valid_until: null }
        : {}),
    });
    if (!updated) throw notFound('connection');
    // Nothing can be sent until credentials are bound again: what was queued waits as skipped.
    skipped = unbind ? (await control.close(trx, scope, id, origin.at, 'skipped')).closed : 0;
    await recordAudit(trx, origin, {
      action: 'connection.update',
      tenantId: scope.tenantId,
      targetType: 'connection',
      targetId: id,
      metadata: {
        fields: Object.keys(body).sort(),
        displayName: updated.display_name,
        config,
        credentialsUnbound: unbind,
        skippedDeliveries: skipped,
      },
    });
    return toConnection(updated);
  });
  // Committed: what the unbinding skipped counts in the tenant's usage (docs/api/usage.md).
  deps.ctx.usage.count(scope.tenantId, 'skipped', skipped, origin.at);
  return edited;
}
