import { createHmac } from 'node:crypto';

// Signers written from each provider's public documentation, as the provider itself signs a
// webhook. test/sources/schemes.test.ts checks each one against the provider's own SDK where an npm
// package exists, so that hubgate's verifiers are tested against what providers really send.

const hmacOf = (key: string | Buffer, data: string): Buffer =>
  createHmac('sha256', key).update(data).digest();

export const unix = (at: Date): number => Math.floor(at.getTime() / 1000);

/** Stripe (docs.stripe.com/webhooks#verify-manually): `t=<unix>,v1=<hex HMAC of "t.body">`. */
export function stripeSignature(secret: string, body: string, at: Date): string {
  const t = unix(at);
  return `t=${t},v1=${hmacOf(secret, `${t}.${body}`).toString('hex')}`;
}

/** GitHub (docs.github.com, validating webhook deliveries): `sha256=<hex HMAC of the body>`. */
export const githubSignature = (secret: string, body: string): string =>
  `sha256=${hmacOf(secret, body).toString('hex')}`;

/** Slack (api.slack.com/authentication/verifying-requests-from-slack): `v0=<hex HMAC of "v0:ts:body">`. */
export const slackSignature = (secret: string, timestamp: number | string, body: string): string =>
  `v0=${hmacOf(secret, `v0:${timestamp}:${body}`).toString('hex')}`;

/** Shopify (shopify.dev, verify the webhook): base64 HMAC of the body with the client secret. */
export const shopifySignature = (secret: string, body: string): string =>
  hmacOf(secret, body).toString('base64');

/** Standard Webhooks (standardwebhooks.com spec): `v1,<base64 HMAC of "id.ts.body">`, key = the bytes after `whsec_`. */
export function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${hmacOf(key, `${id}.${timestamp}.${body}`).toString('base64')}`;
}

/** Any HMAC sender: the digest of the body in `encoding`, after `prefix`. */
export const hmacSignature = (
  secret: string,
  body: string,
  encoding: 'hex' | 'base64',
  prefix = '',
): string => `${prefix}${hmacOf(secret, body).toString(encoding)}`;
