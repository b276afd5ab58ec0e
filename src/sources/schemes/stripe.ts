import { fieldAt, header, hmacSha256, sameBytes, timestampFresh, type Scheme } from '../scheme.js';

// Stripe (docs.stripe.com/webhooks#verify-manually): `Stripe-Signature: t=<unix>,v1=<hex>[,v1=…]`,
// HMAC-SHA256 with the endpoint's secret (`whsec_…`, used as it is) over `t.body`; any `v1` may match.

export const stripe: Scheme = {
  name: 'stripe',
  fields: {},
  verify(request, secret, _config, now) {
    const value = header(request, 'stripe-signature');
    if (!value) return false;
    const pairs = value.split(',').map((part) => part.split('=', 2) as [string, string | undefined]);
    const timestamp = pairs.find(([k]) => k.trim() === 't')?.[1];
    if (!timestampFresh(timestamp, now)) return false;
    const expected = hmacSha256(secret, Buffer.concat([Buffer.from(`${timestamp}.`), request.raw]));
    return pairs
      .filter(([k, v]) => k.trim() === 'v1' && v !== undefined && /^[0-9a-f]{64}$/.test(v))
      .some(([, v]) => sameBytes(Buffer.from(v ?? '', 'hex'), expected));
  },
  providerType: (request) => fieldAt(request.body, 'type'),
  deliveryId: (request) => fieldAt(request.body, 'id'),
  signatureHeaders: () => ['stripe-signature'],
};
