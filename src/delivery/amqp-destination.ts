import { connect, type ChannelModel, type ConfirmChannel, type Message } from 'amqplib';
import type { RenderedPublish } from '../connections/connector.js';
import { within as withinMs, type Budget } from '../deadline.js';
import { REDACTED } from '../outbound/redact.js';
import { classify, resolveChecked, type Resolver, type SendError } from '../outbound/sender.js';
import { checkAddress, parseIpLiteral, type DestinationPolicy } from '../outbound/ssrf-policy.js';
import {
  createSessionPool,
  DEFAULT_SESSION_POOL,
  sessionFingerprint,
  type BrokerSession,
  type SessionPoolOptions,
} from './broker-sessions.js';
import type { AttemptResult, Destination } from './destination.js';
import type { PreparedRequest } from './prepare.js';

// RabbitMQ and any AMQP 0-9-1 broker (contract §21, docs/decisions/0081): one connection and one
// confirm channel per hubgate connection (broker-sessions.ts); a message is delivered once the broker
// confirms it (basic.ack). Published `mandatory`, so a message no queue takes comes back (basic.return,
// sent before its ack) and the attempt fails; a nack, a channel the broker closed, a connection that
// died fail it too, and each says why in words.

class Failure extends Error {
  constructor(
    readonly error: SendError,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/** One open connection to a broker and its confirm channel. */
interface AmqpSession extends BrokerSession {
  readonly remoteAddress: string;
  publish(message: RenderedPublish): Promise<string>;
}

/** What the broker said last when it closed the channel or the connection (its own words). */
const brokerWords = (error: unknown) => {
  const message = (error as { message?: string } | undefined)?.message ?? 'closed';
  return message.replace(/^(Channel|Connection) closed by server: /, '');
};

/**
 * §8 on the broker's address itself, at every connect: a literal is judged as it is, a name by each
 * of its addresses, and the one checked is the one connected to (a second answer cannot rebind).
 */
async function checkedAddress(host: string, policy: DestinationPolicy, resolve: Resolver | undefined) {
  if (!parseIpLiteral(host)) return (await resolveChecked(host, policy.allowedCidrs, resolve)).address;
  const verdict = checkAddress(host, policy.allowedCidrs);
  if (!verdict.allowed) {
    throw new Failure('destination_forbidden', `address ${host} is in a refused range: ${verdict.range}`);
  }
  return host;
}

/** Where and how long opening a session may take: the attempt's budget left when it starts. */
interface Opening {
  policy: DestinationPolicy;
  resolve: Resolver | undefined;
  timeoutMs: number;
}

/** Connects and logs in to the checked address; a refused login says so. */
async function logIn(publish: RenderedPublish, { policy, resolve, timeoutMs }: Opening) {
  const url = new URL(publish.broker.url);
  const tls = url.protocol === 'amqps:';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
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
      throw new Failure('connection_error', `the broker refused the credentials: ${words}`);
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
          reject(new Failure('connection_error', words));
        } else if (back) {
          reject(new Failure('connection_error', `the broker returned the message as unroutable: ${back}`));
        } else resolvePublish('confirmed');
      });
    });
}

// A clean close waits for the broker's close-ok, which a broker gone away never sends.
const CLOSE_WAIT_MS = 1_000;

/** Closes a connection cleanly, or, when the broker does not answer in time, drops its socket. */
async function closeBounded(model: ChannelModel): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), CLOSE_WAIT_MS)));
  const closed = model.close().then(
    () => 'closed' as const,
    () => 'closed' as const,
  );
  const how = await Promise.race([closed, waited]);
  clearTimeout(timer);
  if (how === 'late') (model.connection as unknown as { stream?: { destroy(): void } }).stream?.destroy();
}

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

/** Settles as `work` does, or rejects with a TimeoutError once the budget is spent. */
function within<T>(work: Promise<T>, budget: Budget): Promise<T> {
  if (budget.signal.aborted) return Promise.reject(budget.signal.reason as Error);
  return new Promise<T>((resolveWork, reject) => {
    const onAbort = () => reject(budget.signal.reason as Error);
    budget.signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        budget.signal.removeEventListener('abort', onAbort);
        resolveWork(value);
      },
      (error: unknown) => {
        budget.signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** An error's words with every secret of the connection taken out; `connected`: the session was open. */
function failed(
  error: unknown,
  secrets: readonly string[],
  connected: boolean,
): { error: SendError; detail: string } {
  const known = error instanceof Failure ? { error: error.error, detail: error.detail } : classify(error);
  let { detail } = known;
  // amqplib's own connect timeout is a plain Error whose message says it.
  const timedOut = known.error === 'timeout' || /ETIMEDOUT/.test(brokerWords(error));
  if (timedOut) {
    detail = connected
      ? 'no confirm from the broker within DELIVERY_TIMEOUT_MS'
      : 'the broker did not let hubgate connect and log in within DELIVERY_TIMEOUT_MS';
  } else if (!(error instanceof Failure) && detail === 'the connection failed') detail = brokerWords(error);
  for (const secret of secrets) detail = detail.split(secret).join(REDACTED);
  return { error: timedOut ? 'timeout' : known.error, detail };
}

export interface AmqpDestinationOptions {
  policy: DestinationPolicy;
  resolve?: Resolver;
  sessions?: SessionPoolOptions;
}

/** An attempt's result from what it came to, timed from `started`; a broker has no HTTP status. */
const resultOf = (
  started: number,
  fields: Omit<AttemptResult, 'durationMs' | 'retryAfterSeconds' | 'status'>,
): AttemptResult => ({
  ...fields,
  status: null,
  retryAfterSeconds: null,
  durationMs: Math.round(performance.now() - started),
});

const PLAINTEXT_REFUSED = 'amqp: (no TLS) is refused unless DELIVERY_ALLOW_HTTP=true; use amqps:';

/** The `amqp` connector's destination: publishes with publisher confirms over kept sessions. */
export function amqpDestination(options: AmqpDestinationOptions): Destination {
  const pool = createSessionPool<AmqpSession>(options.sessions ?? DEFAULT_SESSION_POOL);
  const { policy, resolve } = options;
  return {
    async send(prepared: PreparedRequest, budget: Budget): Promise<AttemptResult> {
      const started = performance.now();
      const { request } = prepared;
      if (request.method !== 'PUBLISH') throw new Error('an HTTP request reached the AMQP destination');
      const failure = (error: SendError, errorDetail: string, remoteAddress: string | null = null) =>
        resultOf(started, { ok: false, remoteAddress, error, errorDetail, response: null });
      if (new URL(request.broker.url).protocol !== 'amqps:' && !policy.allowHttp) {
        return failure('destination_forbidden', PLAINTEXT_REFUSED);
      }
      const { username, password } = request.broker;
      const fingerprint = sessionFingerprint(request.broker.url, username, password);
      const open = () => openSession(request, { policy, resolve, timeoutMs: budget.remainingMs() });
      let session: AmqpSession | undefined;
      try {
        session = await within(pool.acquire(prepared.connectionId, fingerprint, open), budget);
        const words = await within(session.publish(request), budget);
        const response = { headers: {}, body: words, bodyTruncated: false };
        return resultOf(started, {
          ok: true,
          remoteAddress: session.remoteAddress,
          error: null,
          errorDetail: null,
          response,
        });
      } catch (error) {
        const { error: code, detail } = failed(error, prepared.secrets, session !== undefined);
        // A session that failed mid-publish is not used again, nor one that did not confirm in time (a
        // broker that stopped answering would time out every attempt until its heartbeat ran out); a
        // refused message leaves it open.
        if (session && (!session.isOpen() || code === 'timeout'))
          pool.discard(prepared.connectionId, session);
        return failure(code, detail, session?.remoteAddress ?? null);
      }
    },
    close: () => pool.close(),
  };
}
