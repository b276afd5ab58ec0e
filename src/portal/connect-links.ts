import { recordAudit, type AuditOrigin } from '../access/audit.js';
import { connectLinkScopeOf, type TenantScope } from '../access/scope.js';
import { releaseReservation } from '../access/sessions.js';
import {
  bindCredentials,
  checkUrlFields,
  createConnection,
  type ConnectionDeps,
} from '../connections/connections.js';
import type { ConnectorDefinition } from '../connections/connector.js';
import { checkFilter } from '../connections/filter.js';
import { randomBase62 } from '../crypto/base62.js';
import { isIdOf, newId } from '../crypto/ids.js';
import type { Keyring } from '../crypto/keyring.js';
import { listPage, type Page, type PageQuery } from '../http/pagination.js';
import { fieldProblem, HttpProblem, notFound } from '../http/problem.js';
import { bodyValidator, validationProblem } from '../http/validation.js';
import { credentialFieldsOf, fieldsOf, type FieldInfo } from '../hub/hub.js';
import {
  startAuthorization,
  type AuthorizeDeps,
  type CallbackRequest,
  type OwnerReturn,
} from '../oauth/authorize.js';
import { reserveAttempt } from '../sign-in/sign-in.js';
import { getTenant } from '../tenants/tenants.js';
import { checkRoomForConnectLink } from './caps.js';
import {
  claimConnectSessionRow,
  completeConnectSessionRow,
  completePendingConnectSessionRow,
  connectionMadeBy,
  findConnectSessionRow,
  findLiveConnectSessionRow,
  insertConnectSession,
  listConnectSessionRows,
  releaseConnectSessionRow,
  revokeConnectSessionRow,
  type ConnectSessionRow,
  type NewConnectSessionRow,
} from './connect-store.js';
import type { Branding } from './settings-schemas.js';
import { brandingOf } from './settings.js';

/**
 * What a link needs of connections: whatever their create takes (the connector catalog, and after
 * portal sessions what a create does for them), so a link creates exactly as the API does; and
 * OAuth2's start of an authorization, for connectors of the authorization-code grant.
 */
export type ConnectDeps = Parameters<typeof createConnection>[0] &
  ConnectionDeps & { oauth: { authorize: AuthorizeDeps } };

const CODE_LENGTH = 32;
const CODE_SHAPE = new RegExp(`^[0-9A-Za-z]{${CODE_LENGTH}}$`);
const DEFAULT_LIFETIME_SECONDS = 86_400;
/** How long a complete holds its link while it creates the connection; a dead process's hold lapses. */
const CLAIM_MS = 60_000;

/** Hashed as invitation links are, the input marked as a connect link's so no other link's hash matches. */
const codeHashOf = (keyring: Keyring, code: string): string =>
  keyring.hashToken('setup-token-hash', `connect:${code}`);

/** The link: the code travels in the fragment, which browsers never send to a server. */
const connectUrl = (publicOrigin: string, tenantId: string, code: string): string =>
  `${publicOrigin}/connect/${tenantId}#code=${code}`;

export type ConnectStatus = 'pending' | 'completed' | 'expired';

/** A link as the API shows it after its create: never its code. */
export interface ConnectSession {
  id: string;
  status: ConnectStatus;
  connectorKey: string;
  subject: string;
  connectionId: string | null;
  expiresAt: string;
  createdAt: string;
}

export interface ConnectSessionInput {
  connectorKey: string;
  subject: string;
  displayName?: string;
  config?: Record<string, unknown>;
  expiresInSeconds?: number;
}

function toSession(row: ConnectSessionRow, now: Date): ConnectSession {
  const expiresAt = new Date(row.expires_at);
  return {
    id: row.id,
    status: row.completed_at ? 'completed' : expiresAt <= now ? 'expired' : 'pending',
    connectorKey: row.connector_key,
    subject: row.subject,
    connectionId: row.connection_id,
    expiresAt: expiresAt.toISOString(),
    createdAt: new Date(row.created_at).toISOString(),
  };
}

const unknownConnector = (message: string) => fieldProblem('connectorKey', message);

/** The connector a link is for: known and switched on. */
async function linkableConnector(deps: ConnectDeps, key: string): Promise<ConnectorDefinition> {
  const definition = await deps.catalog.current(key);
  if (!definition || !deps.catalog.isEnabled(key)) {
    throw unknownConnector(definition ? 'is switched off on this hub' : 'is not a known connector');
  }
  return definition;
}

const partialValidators = new WeakMap<ConnectorDefinition, (value: unknown) => unknown>();
const wholeValidators = new WeakMap<ConnectorDefinition, (value: unknown) => unknown>();
const credentialValidators = new WeakMap<ConnectorDefinition, (value: unknown) => unknown>();

function cached(
  map: WeakMap<ConnectorDefinition, (value: unknown) => unknown>,
  definition: ConnectorDefinition,
  schema: () => object,
) {
  let validate = map.get(definition);
  if (!validate) {
    validate = bodyValidator<unknown>(schema());
    map.set(definition, validate);
  }
  return validate;
}

/**
 * Checks `value` under the body's `at` field (`config`, `credentials`) with the connector's own
 * schema, so every error names the field as the body holds it (`config.url`).
 */
const checkUnder = (at: string, validate: (value: unknown) => unknown, value: unknown) => {
  try {
    validate(value);
  } catch (error) {
    if (!(error instanceof HttpProblem) || !error.errors) throw error;
    throw validationProblem(
      error.errors.map((e) => ({
        instancePath: `/${at}/${e.path.replaceAll('.', '/')}`,
        message: e.message,
      })),
      'body',
    );
  }
};

/** Fixed fields: some of the connector's config fields, each as a create would take it. */
function checkFixedConfig(
  deps: ConnectDeps,
  definition: ConnectorDefinition,
  config: Record<string, unknown>,
) {
  const schema = () => ({ ...definition.config, required: [], additionalProperties: false });
  // A copy: the check fills in defaults, and a default is no field the link fixed.
  checkUnder('config', cached(partialValidators, definition, schema), structuredClone(config));
  checkUrlFields(deps, definition, config);
  checkFilter(config.filter, '/config/filter');
}

/**
 * A new connect link for the scope's tenant (docs/api/connect-links.md), audited: its code is shown
 * in the answer's URL once and stored only as a keyed hash.
 */
export async function createConnectSession(
  deps: ConnectDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  input: ConnectSessionInput,
): Promise<ConnectSession & { url: string }> {
  const definition = await linkableConnector(deps, input.connectorKey);
  const config = input.config ?? {};
  checkFixedConfig(deps, definition, config);
  const at = origin.at;
  const code = randomBase62(CODE_LENGTH);
  const row: NewConnectSessionRow = {
    id: newId('cns'),
    connector_key: definition.key,
    subject: input.subject,
    display_name: input.displayName ?? null,
    config,
    code_hash: codeHashOf(deps.ctx.keyring, code),
    expires_at: new Date(at.getTime() + (input.expiresInSeconds ?? DEFAULT_LIFETIME_SECONDS) * 1000),
    created_at: at,
    created_by_type: origin.actorType,
    created_by: origin.actorId,
    completing_until: null,
    completed_at: null,
    connection_id: null,
    revoked_at: null,
  };
  await deps.ctx.db.transaction().execute(async (trx) => {
    await checkRoomForConnectLink(trx, scope, at);
    await insertConnectSession(trx, scope, row);
    await recordAudit(trx, origin, {
      action: 'connect_session.create',
      tenantId: scope.tenantId,
      targetType: 'connect_session',
      targetId: row.id,
      metadata: {
        connectorKey: row.connector_key,
        subject: row.subject,
        displayName: row.display_name,
        config,
        expiresAt: row.expires_at.toISOString(),
      },
    });
  });
  const session = toSession({ ...row, tenant_id: scope.tenantId }, at);
  return { ...session, url: connectUrl(deps.ctx.config.publicUrl.origin, scope.tenantId, code) };
}

export async function getConnectSession(deps: ConnectDeps, scope: TenantScope, id: string) {
  const row = isIdOf('cns', id) ? await findConnectSessionRow(deps.ctx.db, scope, id) : undefined;
  if (!row) throw notFound('connect link');
  return toSession(row, deps.ctx.now());
}

export async function listConnectSessions(
  deps: ConnectDeps,
  scope: TenantScope,
  query: PageQuery,
): Promise<Page<ConnectSession>> {
  const now = deps.ctx.now();
  return listPage(
    query,
    'cns',
    (limit, after) => listConnectSessionRows(deps.ctx.db, scope, limit, after),
    (rows) => rows.map((row) => toSession(row, now)),
    { keyring: deps.ctx.keyring, list: ['connect-sessions', scope.tenantId] },
  );
}

/** Deletes a link: its code stops working at once. Audited; an unknown or deleted one is 404. */
export async function revokeConnectSession(
  deps: ConnectDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  id: string,
): Promise<void> {
  if (!isIdOf('cns', id)) throw notFound('connect link');
  await deps.ctx.db.transaction().execute(async (trx) => {
    const row = await revokeConnectSessionRow(trx, scope, id, origin.at);
    if (!row) throw notFound('connect link');
    await recordAudit(trx, origin, {
      action: 'connect_session.revoke',
      tenantId: scope.tenantId,
      targetType: 'connect_session',
      targetId: id,
      metadata: { connectorKey: row.connector_key, subject: row.subject },
    });
  });
}

/** The tenant's branding on the connect page: the portal settings' (docs/api/portal.md). */
export function connectBrandingOf(deps: ConnectDeps, tenantId: string): Promise<Branding> {
  return brandingOf(deps.ctx.db, tenantId);
}

const TOO_MANY_CODES = 'Too many wrong connect links from this address; try again later.';
const invalidLink = () =>
  new HttpProblem('invalid_credentials', 'This connect link is wrong, used, deleted or expired.');

/**
 * The live link of a code, counted per client address as sign-in counts (ten failures within 15
 * minutes, then 429): a code that works is not counted.
 */
async function liveLink(deps: ConnectDeps, throttleKey: string, code: string, now: Date) {
  await reserveAttempt(deps.ctx.db, throttleKey, now, TOO_MANY_CODES);
  // The shape check spares a lookup, not a count: a malformed guess is still a guess.
  const codeHash = CODE_SHAPE.test(code) ? codeHashOf(deps.ctx.keyring, code) : null;
  const row = codeHash ? await findLiveConnectSessionRow(deps.ctx.db, codeHash, now) : undefined;
  if (!codeHash || !row) throw invalidLink();
  await releaseReservation(deps.ctx.db, throttleKey, now);
  return { row, codeHash };
}

export interface ConnectField extends FieldInfo {
  /** `config`: a field of the connection; `credentials`: a secret, bound and never shown again. */
  kind: 'config' | 'credentials';
  generated: boolean;
}

/** What the connect page shows for a code: the tenant, the connector's fields the link left open. */
export async function connectSessionView(deps: ConnectDeps, throttleKey: string, code: string) {
  const { row } = await liveLink(deps, throttleKey, code, deps.ctx.now());
  const tenant = await getTenant(deps.ctx, row.tenant_id);
  const definition = await deps.catalog.current(row.connector_key);
  if (!definition) throw new HttpProblem('conflict', 'The connector of this link is no longer on this hub.');
  const fixed = new Set(Object.keys(row.config));
  const fields: ConnectField[] = [
    ...fieldsOf(definition.config)
      .filter((field) => !fixed.has(field.name))
      .map((field) => ({ ...field, kind: 'config' as const, generated: false })),
    ...credentialFieldsOf(definition).map((field) => ({ ...field, kind: 'credentials' as const })),
  ];
  return {
    tenant: { name: tenant.name },
    connector: {
      key: definition.key,
      name: definition.name,
      fields,
      ...(definition.broker ? { broker: { signatureCarrier: definition.broker.signatureCarrier } } : {}),
    },
    displayName: row.display_name,
    expiresAt: new Date(row.expires_at).toISOString(),
    branding: await connectBrandingOf(deps, row.tenant_id),
  };
}

export interface ConnectCompletion {
  code: string;
  displayName?: string;
  config?: Record<string, unknown>;
  credentials?: Record<string, unknown>;
}

/** The connection's config and credentials as the link completes them, checked as the API checks them. */
function checkedCompletion(
  deps: ConnectDeps,
  definition: ConnectorDefinition,
  row: ConnectSessionRow,
  input: ConnectCompletion,
) {
  const given = input.config ?? {};
  const fixed = Object.keys(given).find((field) => Object.hasOwn(row.config, field));
  if (fixed !== undefined) throw fieldProblem(`config.${fixed}`, 'is fixed by the link and cannot be given');
  const config = { ...given, ...row.config };
  const whole = () => ({ ...definition.config, additionalProperties: false });
  checkUnder('config', cached(wholeValidators, definition, whole), config);
  checkUrlFields(deps, definition, given);
  checkFilter(given.filter, '/config/filter');
  const { credentials } = input;
  if (credentials !== undefined) {
    const schema = () => ({ ...definition.credentials, additionalProperties: false });
    checkUnder('credentials', cached(credentialValidators, definition, schema), credentials);
    definition.checkCredentials?.(credentials as Record<string, string>);
    checkUrlFields(deps, definition, credentials);
  }
  return { config, credentials };
}

/** The audit origin of what a link does: the link as actor, its subject on every row. */
const linkOrigin = (
  link: ConnectSessionRow,
  request: Pick<AuditOrigin, 'ip' | 'requestId'>,
  at: Date,
): AuditOrigin => ({
  actorType: 'connect_link',
  actorId: link.id,
  actorSubject: link.subject,
  ip: request.ip,
  requestId: request.requestId,
  at,
});

export type ConnectOutcome = { status: 'completed'; connectionId: string } | { authorizationUrl: string };

/**
 * Completes a link (docs/api/connect-links.md): the connection is created in the link's tenant by
 * the API's own create, audited with the link as actor (`connect_link`, its ID, its subject), and
 * the credentials given are bound as `PUT …/credentials` binds them. A link makes one connection:
 * a conditional claim lets one complete through, which looks for a connection the link made before
 * it creates one; the link is completed once the connection exists. An OAuth2 connector of the
 * authorization-code grant answers the provider's URL instead, and the link completes at its callback.
 */
export async function completeConnectSession(
  deps: ConnectDeps,
  request: Pick<AuditOrigin, 'ip' | 'requestId'>,
  throttleKey: string,
  input: ConnectCompletion,
): Promise<ConnectOutcome> {
  const at = deps.ctx.now();
  const { row, codeHash } = await liveLink(deps, throttleKey, input.code, at);
  const tenant = await getTenant(deps.ctx, row.tenant_id);
  // Checked now, not only when the link was made: a tenant that lost the module connects nothing.
  if (!tenant.entitlements.includes('integrations')) {
    throw new HttpProblem('entitlement_missing', 'The tenant of this link is not entitled to integrations.');
  }
  // The link was checked when made; the catalog may have changed since (a connector switched off,
  // a provider removed or turned to the authorization-code grant).
  const definition = await linkableConnector(deps, row.connector_key).catch((error: unknown) => {
    if (!(error instanceof HttpProblem)) throw error;
    const why = error.errors?.[0]?.message ?? 'cannot be connected now';
    throw new HttpProblem('conflict', `The ${row.connector_key} connector ${why}.`);
  });
  const { config, credentials } = checkedCompletion(deps, definition, row, input);
  const claimed = await claimConnectSessionRow(deps.ctx.db, codeHash, at, new Date(at.getTime() + CLAIM_MS));
  // Another complete of this link is under way or done.
  if (!claimed) throw invalidLink();
  const scope = connectLinkScopeOf({ tenantId: row.tenant_id, entitlements: tenant.entitlements });
  const origin = linkOrigin(row, request, at);
  const displayName = input.displayName ?? row.display_name ?? definition.name;
  const body = { connectorKey: definition.key, displayName, ...config };
  if (definition.authorization?.grant === 'authorization_code') {
    return startLinkAuthorization(deps, scope, origin, row, body);
  }
  // A claim lapsed after its connection was committed (a process died before marking the link):
  // the link made its one connection, and says so now.
  const made = await connectionMadeBy(deps.ctx.db, scope, row.id);
  if (made !== undefined) {
    await completeConnectSessionRow(deps.ctx.db, scope, row.id, made, at);
    throw invalidLink();
  }
  let connectionId: string;
  try {
    connectionId = (await createConnection(deps, scope, origin, body)).id;
  } catch (error) {
    // Nothing was made: the person may try again while the link is pending.
    await releaseConnectSessionRow(deps.ctx.db, scope, row.id);
    throw error;
  }
  await completeConnectSessionRow(deps.ctx.db, scope, row.id, connectionId, at);
  if (credentials !== undefined) await bindCredentials(deps, scope, origin, connectionId, credentials);
  return { status: 'completed', connectionId };
}

/**
 * A link of an authorization-code connector, completed (docs/api/connect-links.md): its connection,
 * made now or by an earlier try of the same link (a link makes one), is authorized by the person at
 * the provider, with a state bound to the link; the link stays pending until the callback binds the
 * tokens. The claim is given back either way: the person may try again while the link is pending.
 */
async function startLinkAuthorization(
  deps: ConnectDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  link: ConnectSessionRow,
  body: Parameters<typeof createConnection>[3],
): Promise<{ authorizationUrl: string }> {
  try {
    const made = await connectionMadeBy(deps.ctx.db, scope, link.id);
    const connectionId = made ?? (await createConnection(deps, scope, origin, body)).id;
    return await startAuthorization(
      deps.oauth.authorize,
      scope,
      { connectSessionId: link.id },
      connectionId,
    ).catch((error: unknown) => {
      // The tenant revoked the connection an earlier try made: this link can make no other.
      if (made !== undefined && error instanceof HttpProblem && error.code === 'conflict') {
        throw new HttpProblem('conflict', 'The connection this link made was revoked; ask for a new link.');
      }
      throw error;
    });
  } finally {
    await releaseConnectSessionRow(deps.ctx.db, scope, link.id);
  }
}

/** The connect page a link's authorization returns to, saying what became of it. */
function connectPage(deps: ConnectDeps, tenantId: string, error: string | undefined): string {
  const url = new URL(`/connect/${encodeURIComponent(tenantId)}`, deps.ctx.config.publicUrl);
  if (error === undefined) url.searchParams.set('status', 'completed');
  else url.searchParams.set('authorizationError', error);
  return url.href;
}

/**
 * A connect link's authorization coming back: the link must still be pending (not completed,
 * deleted or expired) and its tenant entitled to integrations, checked now; the binding is audited
 * as the link's, and completes the link, with its connection, in the binding's transaction.
 */
export function connectLinkAuthorizationReturn(deps: ConnectDeps): OwnerReturn {
  return async (state, scope, request: CallbackRequest) => {
    const page = (error?: string) => connectPage(deps, scope.tenantId, error);
    const linkId = state.connect_session_id ?? '';
    const link = await findConnectSessionRow(deps.ctx.db, scope, linkId);
    if (!link || link.completed_at || new Date(link.expires_at) <= request.at) {
      return { refused: page('This connect link is completed, deleted or expired; nothing was bound.') };
    }
    if (!scope.entitlements.includes('integrations')) {
      return { refused: page('The tenant of this link is not entitled to integrations; nothing was bound.') };
    }
    return {
      origin: linkOrigin(link, request, request.at),
      again: 'try again with the link',
      page,
      bound: async (trx, connectionId) => {
        const done = await completePendingConnectSessionRow(trx, scope, link.id, connectionId, request.at);
        // Rolls the binding back: a link deleted or expired meanwhile connects nothing.
        if (!done) {
          throw new HttpProblem(
            'conflict',
            'The connect link was completed, deleted or expired meanwhile; nothing was bound.',
          );
        }
      },
    };
  };
}
