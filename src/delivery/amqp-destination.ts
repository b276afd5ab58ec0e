import { connect, type ChannelModel, type ConfirmChannel, type Message } from 'amqplib';
import type { RenderedPublish } from '../connections/connector.js';
import { within as withinMs } from '../deadline.js';
import { parseIpLiteral } from '../outbound/ssrf-policy.js';
import {
  brokerDestination,
  BrokerFailure,
  checkedAddress,
  closeWithin,
  hostOf,
  type BrokerDestinationOptions,
  type Opening,
  type PublishSession,
} from './broker-destination.js';
import type { Destination } from './destination.js';

// RabbitMQ and any AMQP 0-9-1 broker (contract §21, docs/decisions/0081): one connection and one
// confirm channel per hubgate connection (broker-sessions.ts); a message is delivered once the broker
// confirms it (basic.ack). Published `mandatory`, so a message no queue takes comes back (basic.return,
// sent before its ack) and the attempt fails; a nack, a channel the broker closed, a connection that
// died fail it too, and each says why in words.

/** One open connection to a broker and its confirm channel. */
interface AmqpSession extends PublishSession {
  publish(message: RenderedPublish): Promise<string>;
}

/** What the broker said last when it closed the channel or the connection (its own words). */
const brokerWords = (error: unknown) => {
  const message = (error as { message?: string } | undefined)?.message ?? 'closed';
  return message.replace(/^(Channel|Connection) closed by server: /, '');
};

/** Connects and logs in to the checked address; a refused login says so. */
async function logIn(publish: RenderedPublish, { policy, resolve, timeoutMs }: Opening) {
  const url = new URL(publish.broker.url);
  const tls = url.protocol === 'amqps:';
  const host = hostOf(url);
  const address = await checkedAddress(host, policy, resolve);
  try {
    const model = await connect(
      {
        protocol: tls ? 'amqps' : 'amqp',
        hostname: address,
        port: url.port ? Number(url.port) : tls ? 5671 : 5672,
        // Without a username amqplib logs in as guest/guest, RabbitMQ's default user.
        username: publish.broker.username,
        password: publish.broker.password,
        // No path, or "/", is the default vhost "/" (docs/connectors/amqp.md).
        vhost: decodeURIComponent(url.pathname.slice(1)) || '/',
        heartbeat: 30,
      },
      // TLS checks the certificate against the name in the URL, not the address connected to.
      // The socket's timeout ends a connect or login the broker never answers (amqplib lifts it once
      // open): a session still opening would otherwise hold every later attempt of the connection.
      {
        timeout: Math.max(1, Math.round(timeoutMs)),
        ...(tls && !parseIpLiteral(host) ? { servername: host } : {}),
      },
    );
    return { model, address };
  } catch (error) {
    const words = brokerWords(error);
    if (/ACCESS.REFUSED|403/.test(words)) {
      throw new BrokerFailure('connection_error', `the broker refused the credentials: ${words}`);
    }
    throw error;
  }
}

/** What the broker said of a publish, once it acknowledged it: a nack or a return fail it. */
function publishOn(
  channel: ConfirmChannel,
  returned: Map<string, string>,
  lastWords: () => string | undefined,
) {
  return (message: RenderedPublish) =>
    new Promise<string>((resolvePublish, reject) => {
      const messageId = message.message.id;
      const { exchange = '', routingKey = '' } = message.target;
      const { 'content-type': contentType, ...headers } = message.headers;
      returned.delete(messageId);
      const options = {
        mandatory: true,
        persistent: true,
        contentType: contentType ?? 'application/json',
        messageId,
        type: message.message.type,
        headers,
      };
      channel.publish(exchange, routingKey, Buffer.from(message.body), options, (error: unknown) => {
        const back = returned.get(messageId);
        returned.delete(messageId);
        if (error) {
          const nacked = /nacked/.test(String(error));
          const words = nacked
            ? 'the broker refused the message (nack)'
            : (lastWords() ?? brokerWords(error));
          reject(new BrokerFailure('connection_error', words));
        } else if (back) {
          reject(
            new BrokerFailure('connection_error', `the broker returned the message as unroutable: ${back}`),
          );
        } else resolvePublish('confirmed');
      });
    });
}

/** Closes a connection (close-ok awaited), or drops its socket when the broker does not answer in time. */
const closeBounded = (model: ChannelModel) =>
  closeWithin(
    () => model.close(),
    () => (model.connection as unknown as { stream?: { destroy(): void } }).stream?.destroy(),
  );

async function openSession(publish: RenderedPublish, opening: Opening): Promise<AmqpSession> {
  const started = performance.now();
  const { model, address } = await logIn(publish, opening);
  let lastWords: string | undefined;
  let open = true;
  model.on('error', (error: unknown) => (lastWords = brokerWords(error)));
  model.on('close', () => (open = false));
  let channel: ConfirmChannel;
  try {
    const left = Math.max(1, opening.timeoutMs - (performance.now() - started));
    channel = await withinMs(model.createConfirmChannel(), left, 'opening a confirm channel');
  } catch (error) {
    await closeBounded(model);
    throw error;
  }
  // basic.return comes before the ack of the same message: a returned one is failed when its ack comes.
  const returned = new Map<string, string>();
  channel.on('return', (message: Message) => {
    // A return's fields are basic.return's (reply code and text), whatever the declared type says.
    const { replyCode, replyText } = message.fields as unknown as { replyCode?: number; replyText?: string };
    returned.set(
      String(message.properties.messageId),
      `${replyCode ?? ''} ${replyText ?? 'unroutable'}`.trim(),
    );
  });
  channel.on('error', (error: unknown) => (lastWords = brokerWords(error)));
  channel.on('close', () => {
    open = false;
    // A channel the broker closed (a missing exchange) ends the session: the next attempt opens both.
    void closeBounded(model);
  });
  return {
    remoteAddress: address,
    isOpen: () => open,
    close: () => {
      open = false;
      return closeBounded(model);
    },
    publish: publishOn(channel, returned, () => lastWords),
  };
}

const PLAINTEXT_REFUSED = 'amqp: (no TLS) is refused unless DELIVERY_ALLOW_HTTP=true; use amqps:';

/** The `amqp` connector's destination: publishes with publisher confirms over kept sessions. */
export function amqpDestination(options: BrokerDestinationOptions): Destination {
  return brokerDestination(
    {
      name: 'AMQP',
      tlsProtocol: 'amqps:',
      plaintextRefused: PLAINTEXT_REFUSED,
      openSession,
      noAnswer: 'no confirm from the broker',
      wordsOf: brokerWords,
      // amqplib's own connect timeout is a plain Error whose message says it.
      timedOut: (error) => /ETIMEDOUT/.test(brokerWords(error)),
    },
    options,
  );
}
