import { fieldAt, header, hmacSha256, sameBytes, type Scheme } from '../scheme.js';

// GitHub (docs.github.com/webhooks/using-webhooks/validating-webhook-deliveries):
// `X-Hub-Signature-256: sha256=<hex>`, HMAC-SHA256 of the body with the webhook's secret. No
// timestamp is signed; a replay is caught by `X-GitHub-Delivery`, which de-duplication keeps 7 days.

export const github: Scheme = {
  name: 'github',
  fields: {},
  verify(request, secret) {
    const value = header(request, 'x-hub-signature-256');
    if (!value?.startsWith('sha256=') || !/^[0-9a-f]{64}$/.test(value.slice(7))) return false;
    return sameBytes(Buffer.from(value.slice(7), 'hex'), hmacSha256(secret, request.raw));
  },
  providerType(request) {
    const event = header(request, 'x-github-event');
    if (!event) return undefined;
    const action = fieldAt(request.body, 'action');
    return action ? `${event}.${action}` : event;
  },
  deliveryId: (request) => header(request, 'x-github-delivery'),
  signatureHeaders: () => ['x-hub-signature-256', 'x-hub-signature'],
};
