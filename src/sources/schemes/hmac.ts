import { Type } from 'typebox';
import { fieldAt, header, hmacSha256, sameBytes, type Scheme } from '../scheme.js';

// Any sender that signs the body with HMAC-SHA256 in a header of its own: the header's name, the
// digest's encoding and an optional prefix (`sha256=`) are the source's fields, as are where the
// event type and the delivery ID are.

const HEADER_NAME = '^[A-Za-z0-9-]{1,100}$';
const PATH = '^[A-Za-z0-9_-]{1,100}(\\.[A-Za-z0-9_-]{1,100}){0,9}$';

const text = (config: Readonly<Record<string, unknown>>, name: string): string | undefined => {
  const value = config[name];
  return typeof value === 'string' ? value : undefined;
};

export const hmac: Scheme = {
  name: 'hmac',
  fields: {
    signatureHeader: Type.String({
      pattern: HEADER_NAME,
      description: 'the header holding the signature (hmac)',
    }),
    encoding: Type.Union([Type.Literal('hex'), Type.Literal('base64')], {
      description: 'the digest’s encoding (hmac)',
    }),
    signaturePrefix: Type.Optional(
      Type.String({ maxLength: 20, description: 'before the digest, e.g. `sha256=` (hmac)' }),
    ),
    typePath: Type.Optional(
      Type.String({ pattern: PATH, description: 'the body field of the event type, dotted (hmac)' }),
    ),
    eventType: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'the event type when typePath gives none (hmac)',
      }),
    ),
    idPath: Type.Optional(
      Type.String({ pattern: PATH, description: 'the body field of the delivery ID, dotted (hmac)' }),
    ),
    idHeader: Type.Optional(
      Type.String({ pattern: HEADER_NAME, description: 'the header of the delivery ID (hmac)' }),
    ),
  },
  verify(request, secret, config) {
    const value = header(request, text(config, 'signatureHeader') ?? '');
    const prefix = text(config, 'signaturePrefix') ?? '';
    if (!value?.startsWith(prefix)) return false;
    const digest = value.slice(prefix.length).trim();
    const encoding = text(config, 'encoding') === 'base64' ? 'base64' : 'hex';
    const shape = encoding === 'hex' ? /^[0-9a-fA-F]{64}$/ : /^[A-Za-z0-9+/]{43}=$/;
    if (!shape.test(digest)) return false;
    return sameBytes(Buffer.from(digest, encoding), hmacSha256(secret, request.raw));
  },
  providerType(request, config) {
    const path = text(config, 'typePath');
    return (path && fieldAt(request.body, path)) || text(config, 'eventType');
  },
  deliveryId(request, config) {
    const path = text(config, 'idPath');
    const name = text(config, 'idHeader');
    return (path && fieldAt(request.body, path)) || (name && header(request, name)) || undefined;
  },
  signatureHeaders: (config) => [(text(config, 'signatureHeader') ?? '').toLowerCase()],
};
