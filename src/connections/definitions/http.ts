import { Type } from 'typebox';
import { fieldProblem } from '../../http/problem.js';
import {
  FRAMING_HEADERS,
  HEADER_VALUE_PATTERN,
  isSendableHeaderName,
  isSendableHeaderValue,
} from '../../outbound/headers.js';
import { type ConnectorDefinition, RECEIVER_URL, eventJson, jsonHeaders } from '../connector.js';
import { EventTypePatterns } from '../event-types.js';

// Besides the framing headers, the ones hubgate sets itself on every delivery.
const RESERVED_HEADERS = new Set([
  ...FRAMING_HEADERS,
  'user-agent',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);

/** The event JSON to any HTTP endpoint, authenticated by one header (an API key, a bearer token). */
const http: ConnectorDefinition = {
  key: 'http',
  name: 'HTTP',
  description: 'Sends each event as JSON to an HTTP endpoint with an authentication header of your choice.',
  config: Type.Object({
    url: RECEIVER_URL,
    method: Type.Optional(
      Type.Union([Type.Literal('POST'), Type.Literal('PUT')], {
        default: 'POST',
        description: 'default POST',
      }),
    ),
    eventTypes: Type.Optional(EventTypePatterns),
  }),
  credentials: Type.Object({
    headerName: Type.String({
      pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$",
      description: 'e.g. Authorization or X-Api-Key',
    }),
    headerValue: Type.String({
      minLength: 1,
      maxLength: 4096,
      pattern: HEADER_VALUE_PATTERN,
      description: 'sent as is; secret; tab, visible ASCII and Latin-1 only (what an HTTP client sends)',
    }),
  }),
  urlFields: ['url'],
  rebindOverlapSeconds: 0,
  acceptedEventTypes: ['*'],
  checkCredentials: ({ headerName, headerValue }) => {
    if (headerName && RESERVED_HEADERS.has(headerName.toLowerCase())) {
      throw fieldProblem('headerName', 'is a header hubgate sets itself');
    }
    // Bound once, sent with every delivery: what the HTTP client would refuse is refused here.
    if (headerName !== undefined && !isSendableHeaderName(headerName)) {
      throw fieldProblem('headerName', 'is not an HTTP header name (a token)');
    }
    if (headerValue !== undefined && !isSendableHeaderValue(headerValue)) {
      throw fieldProblem('headerValue', 'holds a character an HTTP header cannot carry');
    }
  },
  render: (event, config, credentials) => ({
    method: config.method === 'PUT' ? 'PUT' : 'POST',
    url: String(config.url),
    headers: {
      ...jsonHeaders(),
      [String(credentials.headerName).toLowerCase()]: String(credentials.headerValue),
    },
    body: eventJson(event),
  }),
};

export default http;
