import { randomBytes } from 'node:crypto';
import { Type, type TProperties } from 'typebox';
import type { ConnectorDefinition } from './connector.js';

// What the broker connectors (amqp, nats, redis, mqtt; contract §21) define the same way: the URL's host
// and port, the generated signing secret beside the login they bind, and how a binding behaves.

const SECRET_PREFIX = 'whsec_';
// The webhook connector's rule for a signing secret (webhook.ts): whsec_ and the padded base64 of 24–64 bytes.
const B64 = '[A-Za-z0-9+/]';
const SIGNING_SECRET_PATTERN = `^${SECRET_PREFIX}(?:(?:${B64}{4}){8,21}(?:${B64}{2}==)?|(?:${B64}{4}){8,20}${B64}{3}=)$`;

/**
 * A broker URL's pattern: `schemes` (a regex alternative), a host name or bracketed IPv6 literal, an
 * optional port, then `path`. No user info: no `@` can be written before the path, so no user or
 * password can be (credentials are bound, never configured).
 */
export const brokerUrlPattern = (schemes: string, path: string) =>
  `^${schemes}://(?:[A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\])(?::[0-9]{1,5})?${path}$`;

/** A broker user bound as a credential. */
export const brokerUser = (description: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 255, description }));

/** A broker secret (a password, a token) bound as a credential. */
export const brokerSecret = (description: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description }));

/** The login fields `login` and the signing secret, generated when left out. */
export const brokerCredentials = (login: TProperties) =>
  Type.Object({
    ...login,
    signingSecret: Type.Optional(
      Type.String({
        pattern: SIGNING_SECRET_PATTERN,
        maxLength: 100,
        description: 'whsec_ + base64 (padded) of 24–64 bytes; leave out to have one generated',
      }),
    ),
  });

/**
 * How a broker connector's binding behaves: the login named by `login` goes to the broker (a new host
 * unbinds it), the signing secret is generated when left out, and every event type is accepted.
 */
export const brokerBinding = (
  ...login: readonly string[]
): Pick<
  ConnectorDefinition,
  | 'urlFields'
  | 'credentialsSentTo'
  | 'generated'
  | 'rebindOverlapSeconds'
  | 'signingSecretField'
  | 'acceptedEventTypes'
> => ({
  // §8 is applied to the broker's address at every connect (src/delivery/*-destination.ts), not by URL
  // rules made for http(s).
  urlFields: [],
  credentialsSentTo: (credentials) => (login.some((field) => credentials[field]) ? 'url' : undefined),
  generated: { signingSecret: () => SECRET_PREFIX + randomBytes(32).toString('base64') },
  rebindOverlapSeconds: 24 * 60 * 60,
  signingSecretField: 'signingSecret',
  acceptedEventTypes: ['*'],
});

/** The broker's URL with the user and password `credentials` hold, each only when bound. */
export function brokerLogin(url: string, credentials: Record<string, string | undefined>) {
  const { username, password } = credentials;
  return {
    url,
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password }),
  };
}
