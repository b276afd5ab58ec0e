import { randomBytes } from 'node:crypto';
import { fieldAt, header, hmacSha256, sameBytes, timestampFresh, type Scheme } from '../scheme.js';

// Standard Webhooks (standardwebhooks.com): `webhook-signature` holds space-separated `v1,<base64>`
// signatures, HMAC-SHA256 with the secret's bytes (after `whsec_`) over `id.timestamp.body`.

const PREFIX = 'whsec_';
const keyOf = (secret: string): Buffer => Buffer.from(secret.slice(PREFIX.length), 'base64');

export const standardWebhooks: Scheme = {
  name: 'standard-webhooks',
  fields: {},
  generateSecret: () => `${PREFIX}${randomBytes(32).toString('base64')}`,
  secretProblem: (secret) =>
    secret.startsWith(PREFIX) && keyOf(secret).length >= 16
      ? undefined
      : 'a Standard Webhooks secret is whsec_ and the base64 of at least 16 bytes',
  verify(request, secret, _config, now) {
    const id = header(request, 'webhook-id');
    const timestamp = header(request, 'webhook-timestamp');
    const signatures = header(request, 'webhook-signature');
    if (!id || !signatures || !timestampFresh(timestamp, now)) return false;
    const expected = hmacSha256(
      keyOf(secret),
      Buffer.concat([Buffer.from(`${id}.${timestamp}.`), request.raw]),
    );
    return signatures
      .split(' ')
      .filter((s) => s.startsWith('v1,'))
      .some((s) => sameBytes(Buffer.from(s.slice(3), 'base64'), expected));
  },
  providerType: (request) => fieldAt(request.body, 'type'),
  deliveryId: (request) => header(request, 'webhook-id'),
  signatureHeaders: () => ['webhook-signature'],
};
