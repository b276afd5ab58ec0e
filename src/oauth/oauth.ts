import type { ConnectorCatalog } from '../connections/catalog.js';
import type { AppContext } from '../context.js';
import { createSender } from '../outbound/sender.js';
import type { AuthorizeDeps } from './authorize.js';
import { createProviderFamily, type ProviderDeps } from './providers.js';
import { bindClientCredentials } from './tokens.js';

/**
 * The OAuth2 domain as buildApp wires it (docs/api/oauth.md): the providers' family in the connector
 * catalog, read when something needs it (a list of the catalog, a create, a key it does not know;
 * not at start-up, which needs no migrated database to build the app), and one sender for token calls under the SSRF policy. `tokens` is
 * what the credential proxy passes to `accessTokenFor`.
 */
export async function createOAuth(ctx: AppContext, catalog: ConnectorCatalog) {
  const sender = createSender({ policy: ctx.config.delivery, timeoutMs: ctx.config.delivery.timeoutMs });
  const family = createProviderFamily(ctx.db);
  // A refresh's lease outlasts any token call (the sender's timeout) with room to write its result.
  const refreshLeaseMs = 2 * ctx.config.delivery.timeoutMs + 5_000;
  const tokens = { ctx, sender, refreshLeaseMs };
  family.bindWith((providerKey) => bindClientCredentials(tokens, providerKey));
  catalog.addFamily(family);
  const providers: ProviderDeps = { ctx, family };
  const authorize: AuthorizeDeps = { ctx, sender, refreshLeaseMs };
  return { providers, authorize, tokens, close: () => sender.close() };
}
