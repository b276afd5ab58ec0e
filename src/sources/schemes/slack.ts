import { fieldAt, header, hmacSha256, sameBytes, timestampFresh, type Scheme } from '../scheme.js';

// Slack (api.slack.com/authentication/verifying-requests-from-slack): `X-Slack-Signature:
// v0=<hex>`, HMAC-SHA256 with the signing secret over `v0:<X-Slack-Request-Timestamp>:body`.

export const slack: Scheme = {
  name: 'slack',
  fields: {},
  verify(request, secret, _config, now) {
    const value = header(request, 'x-slack-signature');
    const timestamp = header(request, 'x-slack-request-timestamp');
    if (!value?.startsWith('v0=') || !/^[0-9a-f]{64}$/.test(value.slice(3))) return false;
    if (!timestampFresh(timestamp, now)) return false;
    const expected = hmacSha256(secret, Buffer.concat([Buffer.from(`v0:${timestamp}:`), request.raw]));
    return sameBytes(Buffer.from(value.slice(3), 'hex'), expected);
  },
  providerType: (request) =>
    fieldAt(request.body, 'type') === 'event_callback'
      ? fieldAt(request.body, 'event.type')
      : fieldAt(request.body, 'type'),
  deliveryId: (request) => fieldAt(request.body, 'event_id'),
  signatureHeaders: () => ['x-slack-signature'],
};
