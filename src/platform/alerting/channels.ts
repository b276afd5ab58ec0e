import { isDeepStrictEqual } from 'node:util';
import { recordAudit, type AuditOrigin } from '../../access/audit.js';
import type { AppContext } from '../../context.js';
import { isIdOf, newId } from '../../crypto/ids.js';
import type { ChannelAttempt } from '../../db/schema.js';
import { listPage, type Page, type PageQuery } from '../../http/pagination.js';
import { HttpProblem, notFound } from '../../http/problem.js';
import { bodyValidator } from '../../http/validation.js';
import { checkHost, checkUrl, type DestinationPolicy } from '../../outbound/ssrf-policy.js';
import {
  deleteChannelRow,
  findChannel,
  insertChannel,
  listChannelRows,
  recordChannelAttempt,
  updateChannel,
  type ChannelRow,
} from './channel-store.js';
import { fingerprintOf } from './fingerprint.js';
import { CHANNEL_KIND_DEFINITIONS, type ChannelKind, type ChannelKindDefinition } from './kinds.js';
import type { ChannelSender, ChannelSendResult, OpenChannel } from './notification.js';
import { channelIdsInUse, readRoutingDocument } from './rules.js';

/**
 * A channel as the API shows it (docs/operators/alerting.md): secret fields only by name. `lastAttempt` is added
 * for the operator console (Grafana's contact points show the same): the channel's latest
 * notification or test, whether it was taken, and why not.
 */
export interface Channel {
  id: string;
  name: string;
  kind: ChannelKind;
  enabled: boolean;
  config: Record<string, unknown>;
  secretFields: string[];
  createdAt: string;
  updatedAt: string;
  lastAttempt: ChannelAttempt | null;
}

export interface AlertingDeps {
  ctx: AppContext;
  sender: ChannelSender;
}

type Config = Record<string, unknown>;

export function toChannel(row: ChannelRow): Channel {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    enabled: row.enabled,
    config: row.config,
    secretFields: [...row.secret_fields].sort(),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
    lastAttempt: row.last_attempt ?? null,
  };
}

const validators = new Map<ChannelKind, (value: unknown) => { config: Config }>();

/** The kind's whole config, checked as `config.*` fields with the one 400 of docs/api/errors.md. */
function checkConfig(definition: ChannelKindDefinition, config: Config): void {
  let validate = validators.get(definition.kind);
  if (!validate) {
    validate = bodyValidator<{ config: Config }>({
      type: 'object',
      properties: { config: { ...definition.config, additionalProperties: false } },
      required: ['config'],
      additionalProperties: false,
    });
    validators.set(definition.kind, validate);
  }
  validate({ config });
}

const fieldError = (code: 'validation_failed' | 'destination_forbidden', field: string, message: string) =>
  new HttpProblem(code, `config.${field}: ${message}`, { errors: [{ path: `config.${field}`, message }] });

/** Every destination of the channel through the SSRF policy (docs/api/connections.md), at configuration time. */
function checkDestinations(
  definition: ChannelKindDefinition,
  config: Config,
  policy: DestinationPolicy,
): void {
  for (const field of definition.urlFields) {
    const value = config[field];
    if (typeof value !== 'string') continue;
    const verdict = checkUrl(value, policy);
    if (!verdict.allowed) throw fieldError(verdict.code, field, verdict.message);
  }
  const field = definition.hostField;
  const host = field ? config[field] : undefined;
  if (field && typeof host === 'string') {
    const verdict = checkHost(host, policy);
    if (!verdict.allowed) throw fieldError(verdict.code, field, verdict.message);
  }
}

/** A PATCH's config names fields of the channel's kind only, whatever their value (`null` included). */
function refuseUnknown(definition: ChannelKindDefinition, given: Config): void {
  const known = new Set(Object.keys(definition.config.properties));
  const unknown = Object.keys(given).filter((field) => !known.has(field));
  if (unknown.length === 0) return;
  const message = 'is not a known field';
  throw new HttpProblem('validation_failed', `config.${unknown[0]}: ${message}`, {
    errors: unknown.map((field) => ({ path: `config.${field}`, message })),
  });
}

/**
 * A PATCH that moves a destination while a secret bound to it is stored must give that secret again
 * (a value, or null to remove it): the stored one was given for the old host, and must never go to
 * the new one. A destination said again unchanged (a form sends every field it shows) moves nothing.
 */
function refuseMovedSecrets(definition: ChannelKindDefinition, stored: Config, patch: Config): void {
  const errors: Array<{ path: string; message: string }> = [];
  for (const [destination, secrets] of Object.entries(definition.destinationSecrets ?? {})) {
    if (!(destination in patch) || isDeepStrictEqual(patch[destination], stored[destination])) continue;
    for (const secret of secrets) {
      if (stored[secret] === undefined || secret in patch) continue;
      errors.push({
        path: `config.${secret}`,
        message: `must be given again when ${destination} changes: a stored secret never goes to another destination`,
      });
    }
  }
  const [first] = errors;
  if (first) throw new HttpProblem('validation_failed', `${first.path}: ${first.message}`, { errors });
}

function refuseGenerated(definition: ChannelKindDefinition, given: Config): void {
  for (const field of Object.keys(definition.generated ?? {})) {
    if (field in given)
      throw fieldError('validation_failed', field, 'is generated by hubgate and cannot be given');
  }
}

/** Splits a whole config into what is shown and what is sealed, and seals it bound to the channel. */
function storedForm(ctx: AppContext, definition: ChannelKindDefinition, id: string, config: Config) {
  const shown: Config = {};
  const secrets: Config = {};
  for (const [field, value] of Object.entries(config)) {
    if (value === undefined) continue;
    if (definition.secretFields.includes(field)) secrets[field] = value;
    else shown[field] = value;
  }
  return {
    config: shown,
    secret_fields: Object.keys(secrets).sort(),
    secrets_sealed: ctx.keyring.seal('alert-channel-secrets', JSON.stringify(secrets), id),
  };
}

/** The channel's config with its secrets, for sending. */
export function openChannel(ctx: Pick<AppContext, 'keyring'>, row: ChannelRow): OpenChannel {
  const secrets = JSON.parse(ctx.keyring.open('alert-channel-secrets', row.secrets_sealed, row.id)) as Config;
  return { id: row.id, name: row.name, kind: row.kind, config: { ...row.config, ...secrets } };
}

async function channelOr404(ctx: AppContext, id: string, options: { forUpdate?: boolean } = {}) {
  const row = isIdOf('chn', id) ? await findChannel(ctx.db, id, options) : undefined;
  if (!row) throw notFound('channel');
  return row;
}

const auditFacts = (row: ChannelRow) => ({
  name: row.name,
  kind: row.kind,
  enabled: row.enabled,
  config: row.config,
  secretFields: row.secret_fields,
});

export async function createChannel(
  ctx: AppContext,
  origin: AuditOrigin,
  body: { name: string; kind: ChannelKind; enabled?: boolean; config: Config },
): Promise<Channel & { signingSecret?: string }> {
  const definition = CHANNEL_KIND_DEFINITIONS[body.kind];
  refuseGenerated(definition, body.config);
  const generated: Config = {};
  for (const [field, make] of Object.entries(definition.generated ?? {})) generated[field] = make();
  const config = { ...body.config, ...generated };
  checkConfig(definition, config);
  checkDestinations(definition, config, ctx.config.delivery);
  const id = newId('chn');
  const row: ChannelRow = {
    id,
    name: body.name,
    kind: body.kind,
    enabled: body.enabled ?? true,
    ...storedForm(ctx, definition, id, config),
    created_at: origin.at,
    updated_at: origin.at,
    last_attempt: null,
  };
  await ctx.db.transaction().execute(async (trx) => {
    await insertChannel(trx, row);
    await recordAudit(trx, origin, {
      action: 'alerting.channel.create',
      tenantId: null,
      targetType: 'alert_channel',
      targetId: id,
      metadata: auditFacts(row),
    });
  });
  // Like Stripe's webhook endpoint secret: returned by the create call, and never again.
  return { ...toChannel(row), ...(generated as { signingSecret?: string }) };
}

export async function listChannels(ctx: AppContext, query: PageQuery): Promise<Page<Channel>> {
  return listPage(
    query,
    'chn',
    (limit, after) => listChannelRows(ctx.db, limit, after),
    (rows) => rows.map(toChannel),
    { keyring: ctx.keyring, list: ['alert-channels'] },
  );
}

export async function getChannel(ctx: AppContext, id: string): Promise<Channel> {
  return toChannel(await channelOr404(ctx, id));
}

/**
 * Changes what the body names; omitted fields stay as they are, and `null` removes an optional one.
 * Fields the kind does not have are refused, `null` or not. The merged config is checked whole, as
 * at creation, and a destination that changes needs the secrets bound to it given again.
 */
export async function patchChannel(
  ctx: AppContext,
  origin: AuditOrigin,
  id: string,
  body: { name?: string; kind?: ChannelKind; enabled?: boolean; config?: Config },
): Promise<Channel> {
  return ctx.db.transaction().execute(async (trx) => {
    const row = await channelOr404({ ...ctx, db: trx }, id, { forUpdate: true });
    if (body.kind !== undefined && body.kind !== row.kind) {
      throw new HttpProblem('validation_failed', 'kind: cannot change; create a channel of the other kind', {
        errors: [{ path: 'kind', message: 'cannot change; create a channel of the other kind' }],
      });
    }
    const definition = CHANNEL_KIND_DEFINITIONS[row.kind];
    const patch = body.config ?? {};
    refuseUnknown(definition, patch);
    refuseGenerated(definition, patch);
    const stored = openChannel(ctx, row).config;
    const config = { ...stored };
    for (const [field, value] of Object.entries(patch)) {
      if (value === null) delete config[field];
      else config[field] = value;
    }
    checkConfig(definition, config);
    refuseMovedSecrets(definition, stored, patch);
    checkDestinations(definition, config, ctx.config.delivery);
    const updated: ChannelRow = {
      ...row,
      name: body.name ?? row.name,
      enabled: body.enabled ?? row.enabled,
      ...storedForm(ctx, definition, id, config),
      updated_at: origin.at,
    };
    await updateChannel(trx, updated);
    await recordAudit(trx, origin, {
      action: 'alerting.channel.update',
      tenantId: null,
      targetType: 'alert_channel',
      targetId: id,
      metadata: { ...auditFacts(updated), changedFields: Object.keys(patch).sort() },
    });
    return toChannel(updated);
  });
}

export async function deleteChannel(ctx: AppContext, origin: AuditOrigin, id: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const row = await channelOr404({ ...ctx, db: trx }, id, { forUpdate: true });
    // The routing row is locked first, so a rules PUT naming this channel waits and then sees it gone.
    await trx.selectFrom('alert_routing').select('id').where('id', '=', 1).forUpdate().execute();
    const doc = await readRoutingDocument(trx);
    if (channelIdsInUse(doc).has(id)) {
      // Saying which, so the operator knows what to change.
      const users = [
        ...(doc.defaults.channelIds.includes(id) ? ['the defaults'] : []),
        ...doc.rules.filter((rule) => rule.channelIds.includes(id)).map((rule) => `rule “${rule.name}”`),
      ];
      throw new HttpProblem(
        'conflict',
        `${users.join(', ')} use${users.length === 1 ? 's' : ''} this channel; change the rules first.`,
      );
    }
    await deleteChannelRow(trx, id);
    await recordAudit(trx, origin, {
      action: 'alerting.channel.delete',
      tenantId: null,
      targetType: 'alert_channel',
      targetId: id,
      metadata: auditFacts(row),
    });
  });
}

/** `POST …/:id/test`: a test notification, sent whether or not the channel is enabled. */
export async function testChannel(deps: AlertingDeps, id: string): Promise<ChannelSendResult> {
  const { ctx } = deps;
  const row = await channelOr404(ctx, id);
  const labels = { alertname: 'HubgateTestNotification', severity: 'info' };
  const result = await deps.sender.send(openChannel(ctx, row), {
    status: 'firing',
    alerts: [
      {
        fingerprint: fingerprintOf(labels),
        labels,
        annotations: {
          summary: 'Test notification from hubgate',
          description: `Sent on request to the channel "${row.name}" to check that it works.`,
        },
        status: 'firing',
        startsAt: ctx.now(),
        endsAt: null,
      },
    ],
  });
  ctx.metrics.alertNotifications.inc({ channel_kind: row.kind, outcome: result.ok ? 'sent' : 'failed' });
  await recordChannelAttempt(ctx.db, row.id, { at: ctx.now().toISOString(), ...result, test: true });
  return result;
}
