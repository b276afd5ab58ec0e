import { header, hmacSha256, sameBytes, type Scheme } from '../scheme.js';

// Shopify (shopify.dev/docs/apps/build/webhooks/subscribe/https#step-5-verify-the-webhook):
// `X-Shopify-Hmac-Sha256`: base64 HMAC-SHA256 of the body with the app's client secret.

export const shopify: Scheme = {
  name: 'shopify',
  fields: {},
  verify(request, secret) {
    const value = header(request, 'x-shopify-hmac-sha256');
    if (!value || !/^[A-Za-z0-9+/]{43}=$/.test(value)) return false;
    return sameBytes(Buffer.from(value, 'base64'), hmacSha256(secret, request.raw));
  },
  providerType: (request) => header(request, 'x-shopify-topic'),
  deliveryId: (request) => header(request, 'x-shopify-webhook-id'),
  signatureHeaders: () => ['x-shopify-hmac-sha256'],
};
