import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Adapter, type AdapterPayload } from 'oidc-provider';
import type { Cleanup } from './cleanup.js';
import type { Harness } from './harness.js';

/** What a token request asked, as the provider saw it (no secret: only the grant and the outcome). */
export interface TokenCall {
  grantType: string;
  ok: boolean;
  error?: string;
}

export interface OAuthProviderOptions {
  /** hubgate's callback, registered as the client's only redirect URI. */
  redirectUri: string;
  /** Seconds an access token lives (3600 unless given). */
  accessTokenTtl?: number;
  /** Each refresh hands out a new refresh token and spends the old one (true unless given). */
  rotateRefreshTokens?: boolean;
  scopes?: string[];
}

/**
 * A real OAuth 2.0 / OpenID provider (oidc-provider) on 127.0.0.1, with one confidential client for
 * hubgate (client_secret_basic; authorization_code, refresh_token and client_credentials), its data
 * in memory. The person's login and consent happen at once, in `authorize`: it follows an
 * authorization URL as a browser would and answers the redirect back to hubgate, code and state.
 */
export async function startOAuthProvider(cleanup: Cleanup, options: OAuthProviderOptions) {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = `hubgate-${randomBytes(4).toString('hex')}`;
  const clientSecret = `cs-${randomBytes(24).toString('base64url')}`;
  const scopes = options.scopes ?? ['openid', 'api:read'];
  const storage = new Map<string, AdapterPayload>();
  let deny = false;
  const tokenCalls: TokenCall[] = [];

  // An in-memory adapter (oidc-provider's storage interface): one map for every model.
  class MemoryAdapter implements Adapter {
    constructor(private readonly model: string) {}
    private key = (id: string) => `${this.model}:${id}`;
    async upsert(id: string, payload: AdapterPayload) {
      storage.set(this.key(id), payload);
    }
    async find(id: string) {
      return storage.get(this.key(id));
    }
    async findByUserCode(userCode: string) {
      return [...storage.values()].find((p) => p.userCode === userCode);
    }
    async findByUid(uid: string) {
      return [...storage.entries()].find(([k, p]) => k.startsWith(`${this.model}:`) && p.uid === uid)?.[1];
    }
    async consume(id: string) {
      const payload = storage.get(this.key(id));
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) {
      storage.delete(this.key(id));
    }
    async revokeByGrantId(grantId: string) {
      for (const [key, payload] of storage) if (payload.grantId === grantId) storage.delete(key);
    }
  }

  const provider = new Provider(issuer, {
    adapter: MemoryAdapter,
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
        scope: scopes.join(' '),
      },
    ],
    scopes,
    // Its own signing key and accounts, rather than the development defaults it warns about.
    jwks: {
      keys: [
        {
          ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
          kid: 'test',
          alg: 'RS256',
          use: 'sig',
        },
      ],
    },
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
    cookies: { keys: [randomBytes(16).toString('hex')] },
    features: { devInteractions: { enabled: false }, clientCredentials: { enabled: true } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    ttl: {
      AccessToken: options.accessTokenTtl ?? 3600,
      ClientCredentials: options.accessTokenTtl ?? 3600,
      RefreshToken: 86_400,
      Grant: 86_400,
      Interaction: 600,
      Session: 86_400,
      AuthorizationCode: 60,
      IdToken: 3600,
    },
    issueRefreshToken: () => true,
    rotateRefreshToken: () => options.rotateRefreshTokens ?? true,
    pkce: { required: () => true },
  });
  provider.on('grant.success', (ctx) =>
    tokenCalls.push({ grantType: String(ctx.oidc.params?.grant_type), ok: true }),
  );
  provider.on('grant.error', (ctx, error) =>
    tokenCalls.push({
      grantType: String(ctx.oidc.params?.grant_type),
      ok: false,
      error: (error as Error & { error?: string }).error ?? error.message,
    }),
  );

  const oidc = provider.callback();
  server.on('request', (req, res) => {
    if (!req.url?.startsWith('/interaction/')) return oidc(req, res);
    // The person signs in as `someone` and consents to every scope asked, or refuses when told to.
    void (async () => {
      const details = await provider.interactionDetails(req, res);
      if (deny) {
        await provider.interactionFinished(req, res, {
          error: 'access_denied',
          error_description: 'The person refused',
        });
        return;
      }
      const grant = new provider.Grant({ accountId: 'someone', clientId: details.params.client_id });
      const missing = (details.prompt.details.missingOIDCScope as string[] | undefined) ?? [];
      if (missing.length > 0) grant.addOIDCScope(missing.join(' '));
      const grantId = await grant.save();
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: 'someone' }, consent: { grantId } },
        { mergeWithLastSubmission: false },
      );
    })().catch(() => {
      res.statusCode = 500;
      res.end();
    });
  });

  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  cleanup.after(close);

  /** Follows the authorization URL as a browser would, cookies and all, to the redirect back to hubgate. */
  async function authorize(authorizationUrl: string, opts: { deny?: boolean } = {}): Promise<URL> {
    deny = opts.deny === true;
    const cookies = new Map<string, string>();
    let url = authorizationUrl;
    for (let hop = 0; hop < 10; hop++) {
      const response = await fetch(url, {
        redirect: 'manual',
        headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      });
      for (const line of response.headers.getSetCookie()) {
        const [pair = ''] = line.split(';');
        const at = pair.indexOf('=');
        cookies.set(pair.slice(0, at), pair.slice(at + 1));
      }
      const location = response.headers.get('location');
      assert.ok(
        location,
        `the provider answered ${response.status} without a redirect at ${new URL(url).pathname}: ${await response.text()}`,
      );
      const next = new URL(location, url);
      if (next.href.startsWith(options.redirectUri)) return next;
      url = next.href;
    }
    return assert.fail('the provider never sent the browser back to hubgate');
  }

  return {
    issuer,
    authorizationUrl: `${issuer}/auth`,
    tokenUrl: `${issuer}/token`,
    apiBaseUrl: `${issuer}/api`,
    clientId,
    clientSecret,
    scopes,
    tokenCalls,
    authorize,
    /** Whether the provider takes this access token (of a person's grant, or of client credentials). */
    async accepts(accessToken: string): Promise<boolean> {
      return Boolean(
        (await provider.AccessToken.find(accessToken)) ??
        (await provider.ClientCredentials.find(accessToken)),
      );
    },
    /** Forgets every refresh token, as a provider does when access is revoked: the next refresh is invalid_grant. */
    revokeRefreshTokens(): void {
      for (const key of [...storage.keys()]) if (key.startsWith('RefreshToken:')) storage.delete(key);
    },
    close,
  };
}

export type TestOAuthProvider = Awaited<ReturnType<typeof startOAuthProvider>>;

let registered = 0;

/**
 * The provider registered with hubgate by the platform key (`POST /api/v1/platform/oauth-providers`),
 * under a key of its own unless `overrides` names one: its `key` and the `connectorKey` of the
 * connector it adds to the catalog.
 */
export async function registerProvider(
  h: Pick<Harness, 'request' | 'platformToken'>,
  idp: TestOAuthProvider,
  overrides: Record<string, unknown> = {},
): Promise<{ key: string; connectorKey: string }> {
  registered += 1;
  const r = await h.request('POST', '/api/v1/platform/oauth-providers', {
    token: h.platformToken,
    body: {
      key: `idp${registered}-${Date.now().toString(36)}`,
      name: 'Test IdP',
      authorizationUrl: idp.authorizationUrl,
      tokenUrl: idp.tokenUrl,
      apiBaseUrl: idp.apiBaseUrl,
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      scopes: idp.scopes,
      ...overrides,
    },
  });
  assert.equal(r.status, 201, `creating the provider answered ${r.status}: ${r.text}`);
  return r.body as { key: string; connectorKey: string };
}
