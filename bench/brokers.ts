import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect, headers as natsHeaders } from '@nats-io/transport-node';
import amqp from 'amqplib';
import mqtt, { type IPublishPacket } from 'mqtt';
import { createClient } from 'redis';
import { Agent, request } from 'undici';
import {
  benchTenant,
  buildHubgate,
  freePort,
  freshDatabase,
  httpJson,
  postJson,
  prepareHubgate,
  startProcess,
} from './support.js';

/**
 * Issue 40's benchmark (contract §21): for each broker of this machine (RabbitMQ, NATS JetStream,
 * Redis Streams, Mosquitto), events/s from publish to a consumer's receipt, in one run:
 * - hubgate, events published one per request (POST /api/v1/integrations/events) to a connection of
 *   that broker's connector;
 * - hubgate, events published in batches (POST /api/v1/integrations/events/batch);
 * - the ceiling: a raw client of the same library hubgate uses publishing the same message (the body
 *   and headers hubgate sent, a new webhook-id each) to the same target, waiting for the same
 *   acknowledgement (AMQP publisher confirm, JetStream PubAck, XADD's entry ID, MQTT QoS 1 PUBACK),
 *   CONNECTIONS publishes in flight.
 * Each case publishes for SECONDS (after WARMUP_SECONDS not counted), then waits until every accepted
 * event has reached the consumer; its rate is the events accepted over the time from the first publish
 * to the last receipt. The consumer is our own, on a second connection, and counts webhook-ids.
 * Each case also counts the CPU time it cost per event (from /proc): `serve`, PostgreSQL's processes,
 * the broker's server and this process (publishers and consumer), since the ratio says little
 * without it: on 2 cores, every process of a case shares the same 2 CPU-seconds per second.
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 1);
const CONCURRENCY = Number(process.env.BENCH_CONNECTIONS ?? 50);
const BATCH = Math.min(100, Math.max(1, Number(process.env.BENCH_BATCH ?? 50)));
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
// A case fails when none of its events has reached the consumer for this long.
const STALL_MS = Number(process.env.BENCH_STALL_SECONDS ?? 30) * 1000;
// BENCH_BROKERS=amqp,redis runs only those (connector keys; `webhook` is the HTTP path beside them).
const ONLY = process.env.BENCH_BROKERS?.split(',');

/** A message as the consumer received it: the webhook-id, and for the first one the whole of it. */
type Receipt = (id: string, sample?: Sample) => void;
/** The body and headers hubgate published, which the raw client publishes again. */
interface Sample {
  body: Buffer;
  headers: Record<string, string>;
}
interface RawPublisher {
  publish(id: string, sample: Sample): Promise<void>;
  close(): Promise<void>;
}
interface Broker {
  name: string;
  connector: string;
  /** The broker server's process name (/proc/PID/comm), for its CPU time; none for the webhook. */
  server?: string;
  config: Record<string, unknown>;
  credentials: Record<string, string>;
  /** Starts our consumer; answers what stops it and deletes what the benchmark made on the broker. */
  consume(onReceipt: Receipt): Promise<() => Promise<void>>;
  raw(): Promise<RawPublisher>;
}

const run = randomBytes(5).toString('hex');
const headersOf = (sample: Sample, id: string): Record<string, string> => ({
  ...sample.headers,
  'webhook-id': id,
});

const rabbit: Broker = (() => {
  const url = 'amqp://guest:guest@127.0.0.1:5672';
  const queue = `hubgate-bench-${run}`;
  return {
    name: 'RabbitMQ',
    connector: 'amqp',
    server: 'beam.smp',
    config: { url: 'amqp://127.0.0.1:5672', exchange: '', routingKey: queue },
    credentials: { username: 'guest', password: 'guest' },
    async consume(onReceipt) {
      const connection = await amqp.connect(url);
      const channel = await connection.createChannel();
      // Durable, as a receiver's queue would be: the broker writes the persistent messages to disk.
      await channel.assertQueue(queue, { durable: true });
      let first = true;
      await channel.consume(
        queue,
        (message) => {
          if (!message) return;
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(message.properties.headers ?? {})) {
            headers[name] = String(value);
          }
          if (message.properties.contentType)
            headers['content-type'] = String(message.properties.contentType);
          onReceipt(headers['webhook-id'] ?? '', first ? { body: message.content, headers } : undefined);
          first = false;
        },
        { noAck: true },
      );
      return async () => {
        await channel.deleteQueue(queue);
        await connection.close();
      };
    },
    async raw() {
      const connection = await amqp.connect(url);
      const channel = await connection.createConfirmChannel();
      return {
        publish: (id, sample) =>
          new Promise((resolve, reject) => {
            const { 'content-type': contentType, ...headers } = headersOf(sample, id);
            channel.publish(
              '',
              queue,
              sample.body,
              { persistent: true, mandatory: true, messageId: id, contentType, headers },
              (error: unknown) => (error ? reject(new Error('nacked')) : resolve()),
            );
          }),
        close: () => connection.close(),
      };
    },
  };
})();

const nats: Broker = (() => {
  const servers = '127.0.0.1:4222';
  const stream = `hubgate-bench-${run}`;
  const subject = `hubgate.bench.${run}`;
  return {
    name: 'NATS JetStream',
    connector: 'nats',
    server: 'nats-server',
    config: { url: 'nats://127.0.0.1:4222', subject },
    credentials: {},
    async consume(onReceipt) {
      const connection = await natsConnect({ servers });
      const manager = await jetstreamManager(connection);
      await manager.streams.add({ name: stream, subjects: [subject] });
      const messages = await (await jetstream(connection).consumers.get(stream)).consume();
      let first = true;
      void (async () => {
        for await (const message of messages) {
          const headers: Record<string, string> = {};
          for (const [name, values] of message.headers ?? []) headers[name] = values[0] ?? '';
          const id = message.headers?.get('webhook-id') ?? '';
          onReceipt(id, first ? { body: Buffer.from(message.data), headers } : undefined);
          first = false;
        }
      })();
      return async () => {
        await messages.close();
        await manager.streams.delete(stream);
        await connection.close();
      };
    },
    async raw() {
      const connection = await natsConnect({ servers });
      const client = jetstream(connection);
      return {
        async publish(id, sample) {
          const sent = natsHeaders();
          for (const [name, value] of Object.entries(headersOf(sample, id))) {
            if (name.toLowerCase() !== 'nats-msg-id') sent.set(name, value);
          }
          // The same de-duplication ID hubgate sends (the event's ID), and the same wait: the PubAck.
          await client.publish(subject, sample.body, { headers: sent, msgID: id });
        },
        close: () => connection.close(),
      };
    },
  };
})();

const redis: Broker = (() => {
  const url = 'redis://127.0.0.1:6379';
  const stream = `hubgate-bench-${run}`;
  return {
    name: 'Redis Streams',
    connector: 'redis',
    server: 'redis-server',
    config: { url, stream },
    credentials: {},
    async consume(onReceipt) {
      const client = createClient({ url, RESP: 2 });
      client.on('error', () => undefined);
      await client.connect();
      let stopped = false;
      let first = true;
      const reading = (async () => {
        let last = '0';
        while (!stopped) {
          const answer = (await client.sendCommand([
            'XREAD',
            'COUNT',
            '1000',
            'BLOCK',
            '500',
            'STREAMS',
            stream,
            last,
          ])) as Array<[string, Array<[string, string[]]>]> | null;
          for (const [, entries] of answer ?? []) {
            for (const [entryId, flat] of entries) {
              last = entryId;
              const fields: Record<string, string> = {};
              for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]!] = flat[i + 1]!;
              const { body = '', ...headers } = fields;
              onReceipt(fields['webhook-id'] ?? '', first ? { body: Buffer.from(body), headers } : undefined);
              first = false;
            }
          }
        }
      })();
      return async () => {
        stopped = true;
        await reading;
        await client.del(stream);
        await client.close();
      };
    },
    async raw() {
      const client = createClient({ url, RESP: 2 });
      client.on('error', () => undefined);
      await client.connect();
      return {
        async publish(id, sample) {
          // The same fields hubgate writes (redis-destination.ts): the headers and `body`.
          const fields = Object.entries(headersOf(sample, id)).flat();
          await client.sendCommand(['XADD', stream, '*', ...fields, 'body', sample.body.toString()]);
        },
        close: () => client.close(),
      };
    },
  };
})();

const mosquitto: Broker = (() => {
  const url = 'mqtt://127.0.0.1:1883';
  const topic = `hubgate-bench/${run}`;
  const clientOptions = (role: string) => ({
    protocolVersion: 5 as const,
    clean: true,
    clientId: `hubgate-bench-${role}-${run}`,
    reconnectPeriod: 0,
  });
  return {
    name: 'MQTT (Mosquitto)',
    connector: 'mqtt',
    server: 'mosquitto',
    config: { url, topic, qos: 1 },
    credentials: {},
    async consume(onReceipt) {
      const client = await mqtt.connectAsync(url, clientOptions('sub'));
      let first = true;
      client.on('message', (_topic: string, payload: Buffer, packet: IPublishPacket) => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(packet.properties?.userProperties ?? {})) {
          headers[name] = Array.isArray(value) ? String(value[0]) : String(value);
        }
        onReceipt(headers['webhook-id'] ?? '', first ? { body: payload, headers } : undefined);
        first = false;
      });
      // QoS 0 to the consumer: the publishers' acknowledgement (PUBACK) is what is compared, and the
      // broker's own delivery to us should not be the narrow part.
      await client.subscribeAsync(topic, { qos: 0 });
      return async () => {
        await client.endAsync();
      };
    },
    async raw() {
      const client = await mqtt.connectAsync(url, clientOptions('pub'));
      return {
        async publish(id, sample) {
          const { 'content-type': contentType, ...rest } = headersOf(sample, id);
          await client.publishAsync(topic, sample.body, {
            qos: 1,
            properties: { contentType, userProperties: { ...rest, 'content-type': contentType ?? '' } },
          });
        },
        close: () => client.endAsync(),
      };
    },
  };
})();

// Not a broker: the webhook path through the same pipeline, to a receiver in this process, beside undici
// POSTs straight to it. It tells what the shared part of delivery (the event, its delivery rows, the
// claim) bounds from what a broker destination adds.
const webhook: Broker = (() => {
  let receiverUrl = '';
  const raw = new Agent({ connections: CONCURRENCY });
  return {
    name: 'webhook (HTTP, for comparison)',
    connector: 'webhook',
    get config() {
      return { url: receiverUrl };
    },
    credentials: {},
    async consume(onReceipt) {
      let first = true;
      const receiver = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const headers: Record<string, string> = {};
          for (const name of ['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature']) {
            const value = req.headers[name];
            if (typeof value === 'string') headers[name] = value;
          }
          onReceipt(
            headers['webhook-id'] ?? '',
            first ? { body: Buffer.concat(chunks), headers } : undefined,
          );
          first = false;
          res.end('ok');
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      return () => new Promise<void>((resolve) => receiver.close(() => resolve()));
    },
    raw: async () => ({
      async publish(id, sample) {
        const r = await request(receiverUrl, {
          method: 'POST',
          body: sample.body,
          dispatcher: raw,
          headers: headersOf(sample, id),
        });
        await r.body.dump();
        if (r.statusCode >= 300) throw new Error(`the receiver answered ${r.statusCode}`);
      },
      close: () => raw.close(),
    }),
  };
})();

const brokers = [rabbit, nats, redis, mosquitto, webhook].filter((b) => !ONLY || ONLY.includes(b.connector));

// What the consumer of the broker being measured has received: webhook-id → first receipt time.
const firstSeen = new Map<string, number>();
let duplicates = 0;
let sample: Sample | undefined;
const onReceipt: Receipt = (id, first) => {
  if (first && !sample) sample = first;
  if (firstSeen.has(id)) duplicates++;
  else firstSeen.set(id, performance.now());
};

/** CPU milliseconds so far (user + system) of the processes whose /proc/PID/comm is `name`. */
function cpuOfNamed(name: string): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== name) continue;
      ticks += ticksOf(readFileSync(`/proc/${pid}/stat`, 'utf8'), true);
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return ticks * 10;
}
/**
 * utime + stime of a /proc/PID/stat line (fields 14 and 15, after the parenthesised name), in ticks of
 * 10 ms; with `reaped`, also cutime + cstime (16, 17): PostgreSQL's backends that ended during a case
 * are gone from /proc, and their time is counted in the postmaster's.
 */
function ticksOf(stat: string, reaped = false): number {
  const fields = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  const own = (fields[11] ?? 0) + (fields[12] ?? 0);
  return reaped ? own + (fields[13] ?? 0) + (fields[14] ?? 0) : own;
}
const cpuOfPid = (pid: number | undefined): number => {
  if (pid === undefined) return 0;
  try {
    return ticksOf(readFileSync(`/proc/${pid}/stat`, 'utf8')) * 10;
  } catch {
    return 0;
  }
};
const cpuOfSelf = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
/** Where a case's CPU went: ms per event delivered, by process. */
interface CpuPerEvent {
  serve: number;
  postgres: number;
  broker: number;
  bench: number;
}
/** What `timed` reads the CPU of: set per broker. */
const measured: { servePid?: number; broker?: string } = {};
function cpuNow(): CpuPerEvent {
  return {
    serve: cpuOfPid(measured.servePid),
    postgres: cpuOfNamed('postgres'),
    broker: measured.broker ? cpuOfNamed(measured.broker) : 0,
    bench: cpuOfSelf(),
  };
}

interface Result {
  events: number;
  rate: number;
  duplicates: number;
  cpu: CpuPerEvent;
}

/**
 * Publishes for `seconds` from CONCURRENCY publishers, `perCall` events per call, then waits until the
 * consumer has every accepted event; the rate is events over first publish → last receipt.
 */
async function timed(
  seconds: number,
  perCall: number,
  send: (n: number) => Promise<string[]>,
): Promise<Result> {
  firstSeen.clear();
  duplicates = 0;
  const accepted: string[] = [];
  const cpuBefore = cpuNow();
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) accepted.push(...(await send(perCall)));
    }),
  );
  let lastProgress = performance.now();
  let missing = accepted.length;
  for (;;) {
    const now = accepted.filter((id) => !firstSeen.has(id)).length;
    if (now === 0) break;
    if (now < missing) lastProgress = performance.now();
    else if (performance.now() - lastProgress > STALL_MS) {
      throw new Error(`${now} of ${accepted.length} accepted events never reached the consumer`);
    }
    missing = now;
    await new Promise((r) => setTimeout(r, 50));
  }
  const cpuAfter = cpuNow();
  const perEvent = (key: keyof CpuPerEvent) => (cpuAfter[key] - cpuBefore[key]) / accepted.length;
  const cpu = {
    serve: perEvent('serve'),
    postgres: perEvent('postgres'),
    broker: perEvent('broker'),
    bench: perEvent('bench'),
  };
  let last = start;
  for (const id of accepted) last = Math.max(last, firstSeen.get(id)!);
  return { events: accepted.length, rate: accepted.length / ((last - start) / 1000), duplicates, cpu };
}

buildHubgate();
const agent = new Agent({ connections: CONCURRENCY });
const db = await freshDatabase();
const env = {
  DATABASE_URL: db.url,
  HUBGATE_SECRET_KEY: randomBytes(32).toString('base64'),
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
};
const rows: Array<{ broker: Broker; single: Result; batch: Result; raw: Result; bytes: number }> = [];
try {
  const plt = prepareHubgate(env);
  const server = await startProcess(
    ['dist/main.js', 'serve'],
    { ...env, LOG_LEVEL, RATE_LIMIT_PER_MINUTE: '100000000' },
    await freePort(),
    '/readyz',
  );
  try {
    const { session, keySecret } = await benchTenant(
      server.baseUrl,
      plt,
      ['integrations'],
      ['integrations:OPERATOR'],
    );
    const auth = { authorization: `Bearer ${keySecret}` };
    const event = JSON.stringify({ type: 'bench.event', data: { hello: 'world', n: 1 } });
    const batchBody = JSON.stringify({
      events: Array.from({ length: BATCH }, () => JSON.parse(event) as unknown),
    });
    const single = async () => {
      const text = await postJson(agent, `${server.baseUrl}/api/v1/integrations/events`, auth, event);
      return [(JSON.parse(text) as { id: string }).id];
    };
    const batched = async () => {
      const text = await postJson(
        agent,
        `${server.baseUrl}/api/v1/integrations/events/batch`,
        auth,
        batchBody,
      );
      const items = (JSON.parse(text) as { data: Array<{ id?: string }> }).data;
      if (items.length !== BATCH || items.some((item) => item.id === undefined)) {
        throw new Error(`a batch of ${BATCH} answered ${text.slice(0, 300)}`);
      }
      return items.map((item) => item.id!);
    };
    measured.servePid = server.child.pid;
    for (const broker of brokers) {
      sample = undefined;
      measured.broker = broker.server;
      const stop = await broker.consume(onReceipt);
      // One connection at a time: an event goes to every active connection of the tenant.
      const created = await httpJson('POST', `${server.baseUrl}/api/v1/integrations/connections`, session, {
        connectorKey: broker.connector,
        displayName: `bench ${broker.connector}`,
        ...broker.config,
      });
      if (created.status !== 201)
        throw new Error(`creating ${broker.connector}: ${JSON.stringify(created.body)}`);
      const connection = `${server.baseUrl}/api/v1/integrations/connections/${created.body.id}`;
      const bound = await httpJson('PUT', `${connection}/credentials`, session, broker.credentials);
      if (bound.status !== 200) throw new Error(`binding ${broker.connector}: ${JSON.stringify(bound.body)}`);
      const publisher = await broker.raw();
      try {
        await timed(WARMUP_SECONDS, 1, single);
        const singleResult = await timed(SECONDS, 1, single);
        await timed(WARMUP_SECONDS, BATCH, batched);
        const batchResult = await timed(SECONDS, BATCH, batched);
        const seen = sample as Sample | undefined;
        if (!seen) throw new Error(`the ${broker.name} consumer got no message`);
        let n = 0;
        const raw = async () => {
          const id = `msg_raw_${run}_${++n}`;
          await publisher.publish(id, seen);
          return [id];
        };
        await timed(WARMUP_SECONDS, 1, raw);
        const rawResult = await timed(SECONDS, 1, raw);
        rows.push({
          broker,
          single: singleResult,
          batch: batchResult,
          raw: rawResult,
          bytes: seen.body.length,
        });
      } finally {
        await publisher.close().catch(() => undefined);
        await httpJson('POST', `${connection}/revoke`, session, {});
        await stop().catch((error: unknown) => console.error(`cleaning up ${broker.name}:`, error));
      }
    }
  } finally {
    await server.stop();
  }
} finally {
  await db.drop();
  await agent.close();
}

const f = (r: Result) => r.rate.toFixed(0);
console.log(
  `\nbrokers: ${SECONDS} s per case after ${WARMUP_SECONDS} s of warm-up, ${CONCURRENCY} publishers ` +
    `(HTTP requests, or raw publishes awaiting their acknowledgement), batches of ${BATCH}`,
);
console.log(
  '| broker | body bytes | hubgate single ev/s | hubgate batch-50 ev/s | raw ev/s | ratio single | ratio batch | duplicates |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const { broker, single, batch, raw, bytes } of rows) {
  console.log(
    `| ${broker.name} | ${bytes} | ${f(single)} | ${f(batch)} | ${f(raw)} | ` +
      `${(single.rate / raw.rate).toFixed(2)} | ${(batch.rate / raw.rate).toFixed(2)} | ` +
      `${single.duplicates + batch.duplicates + raw.duplicates} |`,
  );
}
// CPU per event: what each case cost the machine, process by process (PostgreSQL: all its processes,
// so other work on the machine's PostgreSQL during the run counts too).
const ms = (value: number) => value.toFixed(3);
const total = (cpu: CpuPerEvent) => cpu.serve + cpu.postgres + cpu.broker + cpu.bench;
console.log('\nCPU per event, ms (serve · PostgreSQL · broker · benchmark process = total)');
console.log('| broker | hubgate single | hubgate batch-50 | raw |');
console.log('|---|---|---|---|');
const cpuCell = (cpu: CpuPerEvent) =>
  `${ms(cpu.serve)} · ${ms(cpu.postgres)} · ${ms(cpu.broker)} · ${ms(cpu.bench)} = **${ms(total(cpu))}**`;
for (const { broker, single, batch, raw } of rows) {
  console.log(`| ${broker.name} | ${cpuCell(single.cpu)} | ${cpuCell(batch.cpu)} | ${cpuCell(raw.cpu)} |`);
}
