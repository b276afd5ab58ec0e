import { accessSync, constants, statSync } from 'node:fs';
import { ConfigError, type SsoConfig } from '../config.js';

/**
 * The part of the `kerberos` module (mongodb-js/kerberos) used here, typed as it behaves: `username`
 * and `response` stay null until a step produced them. Declared here, not imported, because the module
 * is an optional dependency (it builds from source against the MIT Kerberos headers): a machine
 * without it still type-checks and runs everything but single sign-on.
 */
interface KerberosServer {
  readonly username: string | null;
  readonly response: string | null;
  readonly contextComplete: boolean;
  step(token: string): Promise<string | null>;
}
interface KerberosModule {
  initializeServer(service: string): Promise<KerberosServer>;
}

// A specifier TypeScript does not resolve, for the same reason.
const KERBEROS_MODULE: string = 'kerberos';

/** What one accepted SPNEGO token tells: who the client is, and the token that proves it was us. */
export interface Accepted {
  /** `name@REALM`, as the KDC wrote it in the ticket. */
  principal: string;
  /** Base64 mutual-authentication token for `WWW-Authenticate: Negotiate …`, if the mechanism made one. */
  response: string | null;
}

/** Accepts SPNEGO tokens for the service; rejects any token that does not verify. */
export interface Acceptor {
  accept(token: string): Promise<Accepted>;
}

export class TokenRefused extends Error {}

/**
 * Opens the service's acceptor at start-up, so that a missing library or a keytab that cannot be
 * read stops `serve` with one line naming the variable, instead of failing every sign-in later.
 * The MIT library reads the keytab named by `KRB5_KTNAME` at every step, so it is set for the
 * process here: one keytab per process.
 */
export async function openAcceptor(config: SsoConfig): Promise<Acceptor> {
  let kerberos: KerberosModule;
  try {
    kerberos = (await import(KERBEROS_MODULE)) as KerberosModule;
  } catch (error) {
    throw new ConfigError(
      `single sign-on is configured (SSO_SPNEGO_KEYTAB) but the kerberos module does not load (${firstLine(error)}): ` +
        'install the MIT Kerberos library (Debian: libkrb5-dev) and run npm ci again',
    );
  }
  try {
    if (!statSync(config.keytab).isFile()) throw new Error('not a file');
    accessSync(config.keytab, constants.R_OK);
  } catch (error) {
    throw new ConfigError(`invalid SSO_SPNEGO_KEYTAB: ${config.keytab} cannot be read (${firstLine(error)})`);
  }
  process.env.KRB5_KTNAME = `FILE:${config.keytab}`;
  try {
    // Reads the keytab and finds the service's key in it, as every request will.
    await kerberos.initializeServer(config.principal);
  } catch (error) {
    throw new ConfigError(
      `invalid SSO_SPNEGO_KEYTAB: no key for ${config.principal} (SSO_SPNEGO_PRINCIPAL, by default HTTP@ the host of PUBLIC_URL) can be used from ${config.keytab} (${firstLine(error)})`,
    );
  }

  return {
    async accept(token) {
      // One context per token: a context shared between requests refuses the second (kerberos#108).
      const server = await kerberos.initializeServer(config.principal);
      try {
        await server.step(token);
      } catch (error) {
        throw new TokenRefused(firstLine(error));
      }
      if (!server.contextComplete || !server.username) throw new TokenRefused('the context is not complete');
      return { principal: server.username, response: server.response };
    },
  };
}

const firstLine = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
