import type { Config } from '../config.js';

/**
 * Who hubgate is to an authenticator (docs/api/passkeys.md): the RP ID is the host name of PUBLIC_URL
 * without its port, and the only origin accepted is PUBLIC_URL's. A passkey is bound to the RP ID,
 * so changing PUBLIC_URL's host name orphans every passkey made under the old one.
 */
export interface RelyingParty {
  id: string;
  name: string;
  origin: string;
}

export const relyingPartyOf = (config: Pick<Config, 'publicUrl'>): RelyingParty => ({
  id: config.publicUrl.hostname,
  name: 'hubgate',
  origin: config.publicUrl.origin,
});

/** Challenges are single-use and live five minutes (docs/api/passkeys.md). */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

// The browser gives up after this long; a little under the challenge's life, so a ceremony the
// browser still accepts is never refused for an expired challenge.
export const CEREMONY_TIMEOUT_MS = 4 * 60 * 1000;

/** ES256 and RS256 (docs/api/passkeys.md): what every platform authenticator and security key offers. */
export const ALGORITHMS = [-7, -257];
