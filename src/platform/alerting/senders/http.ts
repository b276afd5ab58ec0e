import { FRAMING_HEADERS, jsonHeaders } from '../../../outbound/headers.js';
import { alertmanagerBody } from './body.js';
import { fromHttp, InvalidChannelConfig, stringField, type KindSender } from './shared.js';

const METHODS = ['POST', 'PUT', 'PATCH'] as const;
type Method = (typeof METHODS)[number];

/** The configured headers, names lower-cased, reserved ones dropped. */
export function customHeaders(config: Record<string, unknown>): Record<string, string> {
  const raw = config.headers ?? {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new InvalidChannelConfig('invalid_config: headers must be an object');
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    // Values are secret: the error names neither the value nor, to be safe, the header.
    if (typeof value !== 'string' || /[\r\n\0]/.test(value)) {
      throw new InvalidChannelConfig('invalid_config: a header value is not a single-line string');
    }
    const lower = name.toLowerCase();
    if (!FRAMING_HEADERS.has(lower)) headers[lower] = value;
  }
  return headers;
}

/**
 * HTTP: the Alertmanager-style body, unsigned, with `method` (POST when left out) to `url`, with the
 * configured headers (they may replace `user-agent`, nothing that frames the request).
 */
export const sendHttp: KindSender = async ({ deps, http }, channel, notification) => {
  const url = stringField(channel.config, 'url');
  const method = (channel.config.method ?? 'POST') as Method;
  if (!METHODS.includes(method))
    throw new InvalidChannelConfig('invalid_config: method must be POST, PUT or PATCH');
  const body = JSON.stringify(
    alertmanagerBody(channel, notification, { publicUrl: deps.publicUrl, now: deps.now() }),
  );
  const { 'content-type': contentType, ...defaults } = jsonHeaders();
  const headers = {
    ...defaults,
    ...customHeaders(channel.config),
    'content-type': contentType ?? 'application/json',
  };
  return fromHttp(await http.send({ method, url, headers, body }));
};
