import { createSender } from '../../../outbound/sender.js';
import type { ChannelKind } from '../kinds.js';
import type { ChannelSendResult, Notification, OpenChannel } from '../notification.js';
import { sendEmail } from './email.js';
import { sendGrafana } from './grafana.js';
import { sendHttp } from './http.js';
import {
  failed,
  InvalidChannelConfig,
  redact,
  secretValues,
  type ChannelSenderDeps,
  type KindSender,
} from './shared.js';
import { sendSlack } from './slack.js';
import { sendWebhook } from './webhook.js';

export { alertmanagerBody, FIRING_ENDS_AT, type AlertmanagerBody } from './body.js';
export type { ChannelSenderDeps } from './shared.js';

const SENDERS: Readonly<Record<ChannelKind, KindSender>> = {
  EMAIL: sendEmail,
  WEBHOOK: sendWebhook,
  SLACK: sendSlack,
  GRAFANA: sendGrafana,
  HTTP: sendHttp,
};

/**
 * Sends notifications to alerting channels (docs/operators/alerting.md). Every HTTP kind goes through one outbound
 * sender, so through the delivery SSRF policy, DNS pinning, no redirects and the answer cap; EMAIL
 * applies the same policy to its SMTP server. A send never throws for what the destination does:
 * it answers `{ok, responseStatus, error}`, and `error` never quotes a secret value of the channel.
 */
export function createChannelSender(deps: ChannelSenderDeps) {
  const http = createSender({ policy: deps.policy, timeoutMs: deps.timeoutMs, resolve: deps.resolve });
  const context = { deps, http };

  async function send(channel: OpenChannel, notification: Notification): Promise<ChannelSendResult> {
    let result: ChannelSendResult;
    try {
      result = await SENDERS[channel.kind](context, channel, notification);
    } catch (error) {
      // Only a config the routes would have refused; anything else is a bug and is thrown on.
      if (!(error instanceof InvalidChannelConfig)) throw error;
      result = failed(null, error.message);
    }
    return result.error === null ? result : { ...result, error: redact(result.error, secretValues(channel)) };
  }

  return { send, close: () => http.close() };
}

export type ChannelSender = ReturnType<typeof createChannelSender>;
