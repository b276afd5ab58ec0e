import { Type } from 'typebox';
import { jsonHeaders } from '../../outbound/headers.js';
import { connectorConfig, UrlField, type ConnectorDefinition } from '../connector.js';
import { EventTypePatterns } from '../event-types.js';

// Slack cuts a message's text at 40,000 characters; the data is shown, not archived.
const MAX_DATA_CHARACTERS = 3_000;

/** A Slack incoming webhook: one message per event. The webhook URL is the secret. */
const slack: ConnectorDefinition = {
  key: 'slack',
  name: 'Slack',
  description: 'Posts a message for each event to a Slack channel through an incoming webhook.',
  config: connectorConfig({ eventTypes: Type.Optional(EventTypePatterns) }),
  credentials: Type.Object({
    webhookUrl: UrlField('the incoming-webhook URL Slack gave you (https://hooks.slack.com/services/…)'),
  }),
  urlFields: ['webhookUrl'],
  rebindOverlapSeconds: 0,
  acceptedEventTypes: ['*'],
  render: (event, _config, credentials) => {
    let data = JSON.stringify(event.data, null, 2);
    if (data.length > MAX_DATA_CHARACTERS) data = `${data.slice(0, MAX_DATA_CHARACTERS)}\n…`;
    return {
      method: 'POST',
      url: String(credentials.webhookUrl),
      headers: jsonHeaders(),
      body: JSON.stringify({
        text: `*${event.type}* · ${event.id} · ${event.timestamp}\n\`\`\`${data}\`\`\``,
      }),
    };
  },
};

export default slack;
