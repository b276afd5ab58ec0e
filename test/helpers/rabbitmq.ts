import { connect as connectTcp } from 'node:net';
import { connect, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { randomBase62 } from '../../src/crypto/base62.js';
import type { Cleanup } from './cleanup.js';
import { waitUntil } from './wait.js';

/** The machine's RabbitMQ (`.ci/run` starts it): guest/guest on loopback, the default vhost. */
export const RABBITMQ_URL = 'amqp://127.0.0.1:5672/';

/** Set by CI (`.ci/run`): there, a broker that is not running is a failure, never a skip. */
const brokersRequired = process.env.HUBGATE_REQUIRE_BROKERS === '1';

/** Whether something accepts connections on RabbitMQ's port. */
async function listening(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTcp({ host: '127.0.0.1', port: 5672 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Why RabbitMQ tests cannot run here, for `describe(name, { skip: await rabbitSkipReason() }, …)`;
 * undefined when they can. With HUBGATE_REQUIRE_BROKERS=1 a broker that is down is not a reason to
 * skip: the tests run and fail at their first connect, loudly.
 */
export async function rabbitSkipReason(): Promise<string | undefined> {
  if (brokersRequired || (await listening())) return undefined;
  return 'RabbitMQ is not running on 127.0.0.1:5672: start it with `rabbitmq-server -detached`';
}

export interface Consumer {
  exchange: string;
  queue: string;
  /** Resolves with the first `count` messages the queue got. */
  waitFor(count: number): Promise<ConsumeMessage[]>;
  received: ConsumeMessage[];
}

/**
 * A test's own exchange (direct, deleted with the test) and queue bound to it with `bindingKey`, and
 * a consumer reading it as a receiver would. Without `bindingKey`, nothing is bound: every message
 * published there is unroutable.
 */
export async function startConsumer(t: Cleanup, bindingKey?: string): Promise<Consumer> {
  const model: ChannelModel = await connect(RABBITMQ_URL);
  t.after(() => model.close().catch(() => undefined));
  const channel = await model.createChannel();
  const exchange = `hubgate-test-${randomBase62(8)}`;
  await channel.assertExchange(exchange, 'direct', { durable: false, autoDelete: false });
  t.after(() => channel.deleteExchange(exchange).catch(() => undefined));
  const { queue } = await channel.assertQueue('', { exclusive: true });
  if (bindingKey !== undefined) await channel.bindQueue(queue, exchange, bindingKey);
  const received: ConsumeMessage[] = [];
  await channel.consume(queue, (message) => {
    if (!message) return;
    received.push(message);
    channel.ack(message);
  });
  return {
    exchange,
    queue,
    received,
    waitFor: (count) =>
      waitUntil(() => received.length >= count && received.slice(0, count), {
        message: () => `${count} messages on ${queue}; it has ${received.length}`,
      }),
  };
}
