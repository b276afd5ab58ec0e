/**
 * Request headers a configuration may never set on an outbound request: the ones that frame or
 * route it (Host, Content-Length, Transfer-Encoding and the other hop-by-hop headers) belong to the
 * HTTP client, and Content-Type to the body hubgate writes.
 */
export const FRAMING_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'proxy-connection',
]);
