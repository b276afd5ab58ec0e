import { Type } from 'typebox';
import { fieldProblem } from '../../http/problem.js';
import {
  FRAMING_HEADERS,
  HEADER_NAME_PATTERN,
  HEADER_VALUE_PATTERN,
  jsonHeaders,
  TRACEPARENT_HEADER,
} from '../../outbound/headers.js';
import {
  clientCredentialsOf,
  connectorConfig,
  eventJson,
  OAUTH2_TOKEN_URL_FIELD,
  OAuth2ClientCredentialsField,
  RECEIVER_URL,
  type ConnectorDefinition,
} from '../connector.js';
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
    headerName: Type.Optional(
      Type.String({
        pattern: HEADER_NAME_PATTERN,
        description:
          'e.g. Authorization or X-Api-Key; with headerValue, unless oauth2ClientCredentials is given',
      }),
    ),
    headerValue: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        pattern: HEADER_VALUE_PATTERN,
        description: 'sent as is; secret; tab, visible ASCII and Latin-1 only (what an HTTP client sends)',
      }),
    ),
    oauth2ClientCredentials: OAuth2ClientCredentialsField,
  }),
  urlFields: ['url', OAUTH2_TOKEN_URL_FIELD],
  credentialsSentTo: 'url',
  rebindOverlapSeconds: 0,
  acceptedEventTypes: ['*'],
  checkCredentials: (credentials) => {
    const { headerName, headerValue } = credentials;
    const oauth2 = clientCredentialsOf(credentials) !== undefined;
    if (headerName && RESERVED_HEADERS.has(headerName.toLowerCase())) {
      throw fieldProblem('headerName', 'is a header hubgate sets itself');
    }
    // One header and its value, OAuth2 client credentials, or both (then the header is another one).
    if ((headerName === undefined) !== (headerValue === undefined)) {
      const missing = headerName === undefined ? 'headerName' : 'headerValue';
      throw fieldProblem(missing, 'is required with the other header field');
    }
    if (headerName === undefined && !oauth2) {
      throw fieldProblem(
        'headerName',
        'is required (with headerValue) unless oauth2ClientCredentials is given',
      );
    }
    if (oauth2 && headerName?.toLowerCase() === 'authorization') {
      throw fieldProblem('headerName', 'cannot be Authorization with oauth2ClientCredentials, which sets it');
    }
  },
  render: (event, config, credentials) => {
    const clientCredentials = clientCredentialsOf(credentials);
    const { headerName, headerValue } = credentials;
    return {
      method: config.method === 'PUT' ? 'PUT' : 'POST',
      url: String(config.url),
      headers: {
        ...jsonHeaders(),
        ...(headerName && headerValue ? { [headerName.toLowerCase()]: headerValue } : {}),
      },
      body: eventJson(event),
      ...(clientCredentials ? { clientCredentials } : {}),
    };
  },
};

export default http;
