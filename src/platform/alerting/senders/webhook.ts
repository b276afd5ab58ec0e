import { newId } from '../../../crypto/ids.js';
import { jsonHeaders } from '../../../outbound/headers.js';
import { signatureHeaders } from '../../../outbound/signing.js';
import { alertmanagerBody } from './body.js';
import { fromHttp, stringField, type KindSender } from './shared.js';

/**
 * WEBHOOK: the Alertmanager-style body, POSTed to `url` and signed as Standard Webhooks
 * (docs/api/signatures.md) with the channel's `signingSecret`. The notice's ID is the
 * webhook-id, the same on every retry so a receiver can deduplicate (a test send gets a new one).
 */
export const sendWebhook: KindSender = async ({ deps, http }, channel, notification) => {
  const url = stringField(channel.config, 'url');
  const secret = stringField(channel.config, 'signingSecret');
  const now = deps.now();
  const body = JSON.stringify(alertmanagerBody(channel, notification, { publicUrl: deps.publicUrl, now }));
  const headers = {
    ...jsonHeaders(),
    ...signatureHeaders(notification.id ?? newId('ntf'), body, [secret], now),
  };
  return fromHttp(await http.send({ method: 'POST', url, headers, body }));
};
