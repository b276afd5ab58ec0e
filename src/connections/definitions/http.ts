import { Type } from 'typebox';
import { fieldProblem } from '../../http/problem.js';
import {
  FRAMING_HEADERS,
  HEADER_NAME_PATTERN,
  HEADER_VALUE_PATTERN,
  jsonHeaders,
  TRACEPARENT_HEADER,
} from '../../outbound/headers.js';
import { connectorConfig, eventJson, RECEIVER_URL, type ConnectorDefinition } from '../connector.js';
import { EventTypePatterns } from '../event-types.js';

// Besides the framing headers, the ones hubgate sets itself on every delivery.
const RESERVED_HEADERS = new Set([
  ...FRAMING_HEADERS,
  'user-agent',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  TRACEPARENT_HEADER,
]);

/** The event JSON to any HTTP endpoint, authenticated by one header (an API key, a bearer token). */
const http: ConnectorDefinition = {
  key: 'http',
  name: 'HTTP',
  description: 'Sends each event as JSON to an HTTP endpoint with an authentication header of your choice.',
  config: connectorConfig({
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
      pattern: HEADER_NAME_PATTERN,
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
  credentialsSentTo: 'url',
  rebindOverlapSeconds: 0,
  acceptedEventTypes: ['*'],
  checkCredentials: ({ headerName }) => {
    if (headerName && RESERVED_HEADERS.has(headerName.toLowerCase())) {
      throw fieldProblem('headerName', 'is a header hubgate sets itself');
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
