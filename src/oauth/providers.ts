import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import { recordAudit, type AuditOrigin } from '../access/audit.js';
import type { ConnectorFamily } from '../connections/catalog.js';
import { COMMON_CONFIG, connectorConfig, type ConnectorDefinition } from '../connections/connector.js';
import type { AppContext } from '../context.js';
import type { DB, OAuthGrant } from '../db/schema.js';
import {
  decodePosition,
  encodePosition,
  notThisListsCursor,
  type CursorBinding,
  type Page,
  type PageQuery,
} from '../http/pagination.js';
import { fieldProblem, HttpProblem, notFound } from '../http/problem.js';
import { StrictObject } from '../http/schemas.js';
import { checkUrl } from '../outbound/ssrf-policy.js';
import { insertInitialAuthorization } from './authorization.js';
import {
  allProviderRows,
  countConnectionsUsing,
  deleteProviderRow,
  findProvider,
  insertProvider,
  listProviderRows,
  updateProvider,
  type ProviderRow,
} from './store.js';

/** A provider as the API shows it (docs/api/oauth.md): never its client secret. */
export interface Provider {
  key: string;
  connectorKey: string;
  name: string;
  authorizationUrl: string | null;
  tokenUrl: string;
  apiBaseUrl: string;
  clientId: string;
  scopes: string[];
  grant: OAuthGrant;
  createdAt: string;
  updatedAt: string;
}

export interface ProviderBody {
  key: string;
  name: string;
  authorizationUrl?: string;
  tokenUrl: string;
  apiBaseUrl: string;
  clientId: string;
  clientSecret: string;
  scopes?: string[];
  grant?: OAuthGrant;
}

export type ProviderPatch = Partial<Omit<ProviderBody, 'key' | 'authorizationUrl'>> & {
  authorizationUrl?: string | null;
};

/** What the OAuth domain is given by buildApp. `members` is the catalog's family (connectors). */
export interface ProviderDeps {
  ctx: Pick<AppContext, 'config' | 'db' | 'keyring' | 'now'>;
  family: ProviderFamily;
}

export const CONNECTOR_PREFIX = 'oauth2:';
export const PROVIDER_KEY_PATTERN = '^[a-z][a-z0-9_-]{1,40}$';
export const connectorKeyOf = (providerKey: string) => `${CONNECTOR_PREFIX}${providerKey}`;

// The client secret is sealed under the OAuth key, bound to the provider's key.
const secretContext = (key: string) => `provider:${key}`;

export function toProvider(row: ProviderRow): Provider {
  return {
    key: row.key,
    connectorKey: connectorKeyOf(row.key),
    name: row.name,
    authorizationUrl: row.authorization_url,
    tokenUrl: row.token_url,
    apiBaseUrl: row.api_base_url,
    clientId: row.client_id,
    scopes: row.scopes,
    grant: row.grant_type,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** The provider's client secret, opened for a call to its token endpoint and nothing else. */
export function clientSecretOf(ctx: Pick<AppContext, 'keyring'>, row: ProviderRow): string {
  return ctx.keyring.open('oauth', row.client_secret_sealed, secretContext(row.key));
}

const URL_FIELDS = ['authorizationUrl', 'tokenUrl', 'apiBaseUrl'] as const;

/** The token and API URLs are outbound calls, and the authorization URL is sent to browsers: all pass §8. */
function checkUrls(deps: ProviderDeps, values: Partial<Record<(typeof URL_FIELDS)[number], unknown>>): void {
  for (const field of URL_FIELDS) {
    const value = values[field];
    if (typeof value !== 'string') continue;
    const verdict = checkUrl(value, deps.ctx.config.delivery);
    if (!verdict.allowed) {
      throw new HttpProblem(verdict.code, `${field}: ${verdict.message}`, {
        errors: [{ path: field, message: verdict.message }],
      });
    }
  }
}

function checkGrant(grant: OAuthGrant, authorizationUrl: string | null | undefined): void {
  if (grant === 'authorization_code' && !authorizationUrl) {
    throw fieldProblem('authorizationUrl', 'is required for the authorization_code grant');
  }
}

const origin = (url: string) => new URL(url).origin;

/** The non-secret facts of a provider, for its audit rows. */
const auditFacts = (p: Provider) => ({
  name: p.name,
  grant: p.grant,
  authorizationUrl: p.authorizationUrl,
  tokenUrl: p.tokenUrl,
  apiBaseUrl: p.apiBaseUrl,
  clientId: p.clientId,
  scopes: p.scopes,
});

export async function createProvider(
  deps: ProviderDeps,
  auditAt: AuditOrigin,
  body: ProviderBody,
): Promise<Provider> {
  const grant = body.grant ?? 'authorization_code';
  checkGrant(grant, body.authorizationUrl);
  checkUrls(deps, body);
  const { db, keyring } = deps.ctx;
  const row: ProviderRow = {
    key: body.key,
    name: body.name,
    authorization_url: body.authorizationUrl ?? null,
    token_url: body.tokenUrl,
    api_base_url: body.apiBaseUrl,
    client_id: body.clientId,
    client_secret_sealed: keyring.seal('oauth', body.clientSecret, secretContext(body.key)),
    scopes: body.scopes ?? [],
    grant_type: grant,
    created_at: auditAt.at,
    updated_at: auditAt.at,
  };
  const provider = toProvider(row);
  await db
    .transaction()
    .execute(async (trx) => {
      if (await findProvider(trx, body.key, { forUpdate: true })) {
        throw new HttpProblem('conflict', `A provider with the key ${body.key} exists already.`);
      }
      await insertProvider(trx, row);
      await recordAudit(trx, auditAt, {
        action: 'oauth_provider.create',
        tenantId: null,
        targetType: 'oauth_provider',
        targetId: body.key,
        metadata: auditFacts(provider),
      });
    })
    .catch(duplicateKey(body.key));
  await deps.family.refresh();
  return provider;
}

/** Two creates of one key at once: the second insert's unique violation is the same 409. */
function duplicateKey(key: string) {
  return (error: unknown): never => {
    if ((error as { code?: string }).code === '23505') {
      throw new HttpProblem('conflict', `A provider with the key ${key} exists already.`);
    }
    throw error;
  };
}

async function providerOr404(db: Kysely<DB>, key: string, forUpdate = false): Promise<ProviderRow> {
  const row = new RegExp(PROVIDER_KEY_PATTERN).test(key)
    ? await findProvider(db, key, { forUpdate })
    : undefined;
  if (!row) throw notFound('OAuth provider');
  return row;
}

export async function getProvider(deps: ProviderDeps, key: string): Promise<Provider> {
  return toProvider(await providerOr404(deps.ctx.db, key));
}

/**
 * Newest first; the cursor is the last item's position (its time and key), signed for this list as
 * every list's cursor is (http/pagination.ts).
 */
export async function listProviders(deps: ProviderDeps, query: PageQuery): Promise<Page<Provider>> {
  const limit = query.limit ?? 20;
  const binding: CursorBinding = { keyring: deps.ctx.keyring, list: ['oauth-providers'] };
  const after = query.cursor === undefined ? undefined : providerPosition(query.cursor, binding);
  const rows = await listProviderRows(deps.ctx.db, limit, after);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    data: page.map(toProvider),
    nextCursor:
      rows.length > limit && last
        ? encodePosition([new Date(last.created_at).toISOString(), last.key], binding)
        : null,
  };
}

function providerPosition(cursor: string, binding: CursorBinding): { createdAt: Date; key: string } {
  const [at = '', key = ''] = decodePosition(cursor, 2, binding);
  const createdAt = new Date(at);
  if (
    !new RegExp(PROVIDER_KEY_PATTERN).test(key) ||
    Number.isNaN(createdAt.getTime()) ||
    createdAt.toISOString() !== at
  ) {
    throw notThisListsCursor();
  }
  return { createdAt, key };
}

/**
 * Changes a provider; omitted fields stay. A new token URL on another origin needs the client secret
 * again (a stored secret never goes to a host it was not given for), and a provider in use keeps its
 * grant (its connections were made for it).
 */
export async function patchProvider(
  deps: ProviderDeps,
  auditAt: AuditOrigin,
  key: string,
  patch: ProviderPatch,
): Promise<Provider> {
  const { db, keyring } = deps.ctx;
  const provider = await db.transaction().execute(async (trx) => {
    const row = await providerOr404(trx, key, true);
    const grant = patch.grant ?? row.grant_type;
    const authorizationUrl =
      patch.authorizationUrl === undefined ? row.authorization_url : patch.authorizationUrl;
    checkGrant(grant, authorizationUrl);
    checkUrls(deps, patch);
    if (
      patch.tokenUrl !== undefined &&
      origin(patch.tokenUrl) !== origin(row.token_url) &&
      patch.clientSecret === undefined
    ) {
      throw fieldProblem('clientSecret', 'must be given again when tokenUrl moves to another origin');
    }
    if (grant !== row.grant_type && (await countConnectionsUsing(trx, connectorKeyOf(key))) > 0) {
      throw new HttpProblem('conflict', 'Connections use this provider: its grant cannot change.');
    }
    const updated = await updateProvider(trx, key, {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      authorization_url: authorizationUrl,
      ...(patch.tokenUrl !== undefined ? { token_url: patch.tokenUrl } : {}),
      ...(patch.apiBaseUrl !== undefined ? { api_base_url: patch.apiBaseUrl } : {}),
      ...(patch.clientId !== undefined ? { client_id: patch.clientId } : {}),
      ...(patch.clientSecret !== undefined
        ? { client_secret_sealed: keyring.seal('oauth', patch.clientSecret, secretContext(key)) }
        : {}),
      ...(patch.scopes !== undefined ? { scopes: JSON.stringify(patch.scopes) } : {}),
      grant_type: grant,
      updated_at: auditAt.at,
    });
    if (!updated) throw notFound('OAuth provider');
    const result = toProvider(updated);
    await recordAudit(trx, auditAt, {
      action: 'oauth_provider.update',
      tenantId: null,
      targetType: 'oauth_provider',
      targetId: key,
      // Which fields changed by name (the secret's too, never its value), and the provider after it.
      metadata: { fields: Object.keys(patch).sort(), ...auditFacts(result) },
    });
    return result;
  });
  await deps.family.refresh();
  return provider;
}

export async function deleteProvider(deps: ProviderDeps, auditAt: AuditOrigin, key: string): Promise<void> {
  await deps.ctx.db.transaction().execute(async (trx) => {
    const row = await providerOr404(trx, key, true);
    const using = await countConnectionsUsing(trx, connectorKeyOf(key));
    if (using > 0) {
      throw new HttpProblem(
        'conflict',
        `${using} connection(s) use this provider; revoke them before deleting it.`,
      );
    }
    await deleteProviderRow(trx, key);
    await recordAudit(trx, auditAt, {
      action: 'oauth_provider.delete',
      tenantId: null,
      targetType: 'oauth_provider',
      targetId: key,
      metadata: auditFacts(toProvider(row)),
    });
  });
  await deps.family.refresh();
}

/** The catalog's family of OAuth2 connectors: one per provider, kept in memory, read again on demand. */
export interface ProviderFamily extends ConnectorFamily {
  /** Sets how a client-credentials connection gets its first tokens (the token logic, above this file). */
  bindWith(bind: (providerKey: string, connectionId: string) => ReturnType<BindOnCreate>): void;
}
type BindOnCreate = NonNullable<NonNullable<ConnectorDefinition['authorization']>['bindOnCreate']>;

const notByCredentials = () =>
  new HttpProblem(
    'conflict',
    'An OAuth2 connection is bound by authorizing it (POST …/authorize), or when it is created (client credentials).',
  );

function definitionOf(
  row: ProviderRow,
  bind: (providerKey: string, connectionId: string) => ReturnType<BindOnCreate>,
): ConnectorDefinition {
  return {
    key: connectorKeyOf(row.key),
    name: row.name,
    description:
      row.grant_type === 'client_credentials'
        ? `Calls to the ${row.name} API, with a token hubgate gets by client credentials`
        : `Calls to the ${row.name} API, once someone authorizes hubgate at ${row.name}`,
    config: connectorConfig({}),
    credentials: Type.Object({}),
    urlFields: [],
    rebindOverlapSeconds: 0,
    // An API connection: no event is delivered to it.
    acceptedEventTypes: [],
    authorization: {
      grant: row.grant_type,
      ...(row.grant_type === 'client_credentials'
        ? { bindOnCreate: (connectionId: string) => bind(row.key, connectionId) }
        : {}),
      holdForInsert: async (trx) => (await findProvider(trx, row.key, { forShare: true })) !== undefined,
      insert: insertInitialAuthorization,
    },
    checkCredentials: () => {
      throw notByCredentials();
    },
    render: () => {
      throw new HttpProblem('conflict', 'An OAuth2 connection receives no events.');
    },
  };
}

export function createProviderFamily(db: Kysely<DB>): ProviderFamily {
  let members: ConnectorDefinition[] = [];
  let bind: (providerKey: string, connectionId: string) => ReturnType<BindOnCreate> = () =>
    Promise.reject(new Error('client credentials binding is not set up'));
  return {
    prefix: CONNECTOR_PREFIX,
    createBody: StrictObject(
      {
        connectorKey: Type.String({
          pattern: `^${CONNECTOR_PREFIX}${PROVIDER_KEY_PATTERN.slice(1)}`,
          description: 'oauth2:<provider key> (GET /api/v1/integration-hub/connectors lists them)',
        }),
        ...COMMON_CONFIG,
      },
      { $id: 'Oauth2ConnectionCreate', title: 'OAuth2 provider', required: ['connectorKey', 'displayName'] },
    ),
    members: () => members,
    async refresh() {
      members = (await allProviderRows(db)).map((row) => definitionOf(row, (k, id) => bind(k, id)));
    },
    bindWith(next) {
      bind = next;
    },
  };
}
