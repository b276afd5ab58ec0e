import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as connectTcp, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createServer as createTlsServer } from 'node:tls';
import { jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { Webhook } from 'standardwebhooks';
import { createKeyring } from '../../src/crypto/keyring.js';
import type { Cleanup } from '../helpers/cleanup.js';
import { startServe } from '../helpers/cli.js';
import { assertNoLeak, makeKey, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { startSubscriber } from '../helpers/mosquitto.js';
import { freePort, listening, NATS_SERVER } from '../helpers/nats.js';
import { rabbitSkipReason, startConsumer } from '../helpers/rabbitmq.js';
import { streamReader } from '../helpers/redis.js';
import { pair } from '../helpers/tcp-proxy.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

// Contract §21 and issue 40: the TLS schemes (`amqps`, `rediss`, `mqtts`, NATS `tls`), checked against
// the system trust store (docs/decisions/0085-outbound-tls-trusts-the-system-store.md). The machine's
// brokers speak plaintext only, so RabbitMQ, Redis and Mosquitto are reached through a TLS terminator
// on loopback (TLS outside, the broker's own protocol inside: these three wrap the whole connection
// in TLS), and NATS, which starts in plaintext and then upgrades, is a nats-server of the test's own
// with TLS. Their certificates are for 127.0.0.1, issued by a CA of the test's own that `serve` finds in
// its system store (OpenSSL's SSL_CERT_FILE and SSL_CERT_DIR point there), and nowhere else: a broker
// whose certificate another CA issued is a failed attempt (`tls_error`) and gets nothing.

const CONNECTIONS = '/api/v1/integrations/connections';
const hasOpenssl = spawnSync('openssl', ['version']).status === 0;

interface Issued {
  caPem: string;
  key: string;
  cert: string;
  keyPath: string;
  certPath: string;
  caPath: string;
}

/** A CA of its own and a server certificate it issued for 127.0.0.1, made with openssl in `dir`. */
function issue(dir: string, name: string): Issued {
  const at = (file: string) => join(dir, `${name}-${file}`);
  const run = (args: string[]) => {
    const result = spawnSync('openssl', args, { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`openssl ${args[0]} failed: ${result.stderr}`);
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  run([
    'req',
    '-x509',
    ...ec,
    '-keyout',
    at('ca.key'),
    '-out',
    at('ca.pem'),
    '-days',
    '2',
    '-subj',
    `/CN=${name} CA`,
  ]);
  run(['req', ...ec, '-keyout', at('server.key'), '-out', at('server.csr'), '-subj', '/CN=127.0.0.1']);
  writeFileSync(at('ext.cnf'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  run([
    'x509',
    '-req',
    '-in',
    at('server.csr'),
    '-CA',
    at('ca.pem'),
    '-CAkey',
    at('ca.key'),
    '-CAcreateserial',
    '-out',
    at('server.pem'),
    '-days',
    '2',
    '-extfile',
    at('ext.cnf'),
  ]);
  return {
    caPem: readFileSync(at('ca.pem'), 'utf8'),
    key: readFileSync(at('server.key'), 'utf8'),
    cert: readFileSync(at('server.pem'), 'utf8'),
    keyPath: at('server.key'),
    certPath: at('server.pem'),
    caPath: at('ca.pem'),
  };
}

/** TLS on a loopback port of its own in front of the broker on `brokerPort`; closed with `t`. */
async function startTerminator(t: Cleanup, issued: Issued, brokerPort: number): Promise<number> {
  const sockets = new Set<Socket>();
  const server = createTlsServer({ key: issued.key, cert: issued.cert }, (client) => {
    const upstream = connectTcp(brokerPort, '127.0.0.1');
    pair(client, upstream, sockets);
    client.pipe(upstream).pipe(client);
  });
  // A handshake the client gave up (an untrusted certificate) is not the test's failure.
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}

/** A nats-server with JetStream and TLS of the test's own, and a consumer of a stream on it. */
async function startTlsNats(t: Cleanup, issued: Issued, dir: string) {
  const port = await freePort();
  const store = join(dir, 'jetstream');
  mkdirSync(store);
  const server = spawn(
    NATS_SERVER!,
    [
      '-a',
      '127.0.0.1',
      '-p',
      String(port),
      '-js',
      '-sd',
      store,
      '--tls',
      '--tlscert',
      issued.certPath,
      '--tlskey',
      issued.keyPath,
    ],
    { stdio: 'ignore' },
  );
  t.after(() => {
    server.kill('SIGTERM');
  });
  await waitUntil(() => listening(port), { message: () => `nats-server with TLS on port ${port}` });
  const client = await natsConnect({
    servers: `tls://127.0.0.1:${port}`,
    tls: { ca: issued.caPem, host: '127.0.0.1' } as { ca: string },
  });
  t.after(() => client.close());
  const manager = await jetstreamManager(client);
  await manager.streams.add({ name: 'tls', subjects: ['tls.>'] });
  const received: JsMsg[] = [];
  const messages = await (await jetstream(client).consumers.get('tls')).consume();
  void (async () => {
    for await (const message of messages) received.push(message);
  })();
  t.after(() => messages.close());
  return { url: `tls://127.0.0.1:${port}`, received };
}

async function brokerConnection(
  h: Harness,
  session: TestSession,
  config: Record<string, unknown>,
  credentials: Record<string, string>,
) {
  const created = await h.request<{ id: string }>('POST', CONNECTIONS, {
    session,
    body: { displayName: `tls ${String(config.connectorKey)}`, ...config },
  });
  assert.equal(
    created.status,
    201,
    `creating ${String(config.url)} answered ${created.status}: ${created.text}`,
  );
  const bound = await h.request<{ credentials: { signingSecret: string } }>(
    'PUT',
    `${CONNECTIONS}/${created.body.id}/credentials`,
    { session, body: credentials },
  );
  assert.equal(bound.status, 200, `binding answered ${bound.status}: ${bound.text}`);
  return { id: created.body.id, secret: bound.body.credentials.signingSecret };
}

/** The message's signature, checked as a consumer would with a Standard Webhooks library. */
function assertSigned(
  secret: string,
  body: string,
  headers: Record<string, string | undefined>,
  what: string,
) {
  const verified = new Webhook(secret).verify(body, {
    'webhook-id': headers['webhook-id'] ?? '',
    'webhook-timestamp': headers['webhook-timestamp'] ?? '',
    'webhook-signature': headers['webhook-signature'] ?? '',
  });
  assert.ok(verified, `the ${what} message does not verify`);
}

describe(
  'brokers over TLS, trusted through the system store',
  {
    skip:
      (ENGINE !== 'postgres' &&
        'PostgreSQL only: `serve` runs as a process of its own (its own system trust store) beside the test, sharing its database, and PGlite is embedded in one process') ||
      (!hasOpenssl && 'openssl is not installed: the test makes its certificates with it') ||
      (await rabbitSkipReason()),
  },
  () => {
    let db: TestDatabase;
    let h: Harness;
    let dir: string;
    const secretKey = randomBytes(32);

    before(async () => {
      db = await createTestDatabase();
      // No DELIVERY_ALLOW_HTTP: only the TLS schemes may be used, here as in production.
      h = await startHarness({
        testDatabase: db,
        keyring: createKeyring(secretKey),
        env: { DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' },
      });
      dir = mkdtempSync(join(tmpdir(), 'hubgate-tls-'));
    });
    after(async () => {
      await h.close();
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    test('amqps, rediss, mqtts and NATS tls deliver to a broker whose CA is in the system store, and refuse one whose CA is not', async (t) => {
      if (db.target.kind !== 'postgres') throw new Error('unreachable');
      if (!NATS_SERVER) throw new Error('no nats-server binary: the TLS NATS server cannot start');
      const trusted = issue(dir, 'trusted');
      const stranger = issue(dir, 'stranger');
      const { session } = await makeSignedInTenant(h);

      const rabbit = await startConsumer(t, 'tls');
      const refusedRabbit = await startConsumer(t, 'tls');
      const stream = await streamReader(t);
      const mqtt = await startSubscriber(t);
      const nats = await startTlsNats(t, trusted, dir);

      const amqps = await brokerConnection(
        h,
        session,
        {
          connectorKey: 'amqp',
          url: `amqps://127.0.0.1:${await startTerminator(t, trusted, 5672)}/`,
          exchange: rabbit.exchange,
          routingKey: 'tls',
        },
        { username: 'guest', password: 'guest' },
      );
      const rediss = await brokerConnection(
        h,
        session,
        {
          connectorKey: 'redis',
          url: `rediss://127.0.0.1:${await startTerminator(t, trusted, 6379)}/0`,
          stream: stream.stream,
        },
        {},
      );
      const mqtts = await brokerConnection(
        h,
        session,
        {
          connectorKey: 'mqtt',
          url: `mqtts://127.0.0.1:${await startTerminator(t, trusted, 1883)}`,
          topic: `${mqtt.prefix}/{type}`,
        },
        {},
      );
      const natsTls = await brokerConnection(
        h,
        session,
        { connectorKey: 'nats', url: nats.url, subject: 'tls.{type}' },
        {},
      );
      const refused = await brokerConnection(
        h,
        session,
        {
          connectorKey: 'amqp',
          url: `amqps://127.0.0.1:${await startTerminator(t, stranger, 5672)}/`,
          exchange: refusedRabbit.exchange,
          routingKey: 'tls',
        },
        { username: 'guest', password: 'guest' },
      );

      // The system store of `serve` holds the test's CA and nothing else.
      const emptyDir = join(dir, 'no-certificates');
      mkdirSync(emptyDir);
      const serve = await startServe(
        {
          DATABASE_URL: db.target.url,
          HUBGATE_SECRET_KEY: secretKey.toString('base64'),
          DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
          DELIVERY_RETRY_SCHEDULE: '3600',
          SSL_CERT_FILE: trusted.caPath,
          SSL_CERT_DIR: emptyDir,
        },
        t,
      );
      const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
      const published = await fetch(`${serve.baseUrl}/api/v1/integrations/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'order.paid', data: { over: 'tls' } }),
      });
      assert.equal(published.status, 202, `publishing answered ${published.status}`);
      const { id } = (await published.json()) as { id: string };

      const [fromRabbit] = await rabbit.waitFor(1);
      const amqpHeaders = Object.fromEntries(
        Object.entries(fromRabbit!.properties.headers ?? {}).map(([name, value]) => [name, String(value)]),
      );
      assert.equal(amqpHeaders['webhook-id'], id, 'RabbitMQ got another event over amqps');
      assertSigned(amqps.secret, fromRabbit!.content.toString('utf8'), amqpHeaders, 'amqps');

      const [entry] = await stream.waitFor(1);
      assert.equal(entry!.field('webhook-id'), id, 'Redis got another event over rediss');
      assertSigned(
        rediss.secret,
        entry!.field('body') ?? '',
        Object.fromEntries(
          ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((n) => [n, entry!.field(n)]),
        ),
        'rediss',
      );

      const [fromMqtt] = await mqtt.waitFor(1);
      assert.equal(fromMqtt!.topic, `${mqtt.prefix}/order.paid`, 'the mqtts message went to another topic');
      assertSigned(mqtts.secret, fromMqtt!.body, fromMqtt!.userProperties, 'mqtts');

      const fromNats = await waitUntil(() => nats.received[0], {
        message: () => 'a message on the TLS NATS server',
      });
      assert.equal(fromNats.subject, 'tls.order.paid', 'the NATS message went to another subject');
      const natsHeaders = Object.fromEntries(
        ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((n) => [n, fromNats.headers?.get(n)]),
      );
      assertSigned(natsTls.secret, fromNats.string(), natsHeaders, 'NATS tls');

      // The stranger's broker: the attempt failed on its certificate, and nothing reached its queue.
      const entryOfRefused = await waitUntil(
        async () => {
          const log = await h.request<{
            data: Array<{
              eventId: string;
              attempts: Array<{ error: string | null; errorDetail: string | null }>;
            }>;
          }>('GET', `${CONNECTIONS}/${refused.id}/events`, { session });
          return log.body.data.find((d) => d.eventId === id && d.attempts.length > 0);
        },
        { message: () => 'an attempt to the broker with an untrusted certificate' },
      );
      assert.equal(
        entryOfRefused.attempts[0]?.error,
        'tls_error',
        'an untrusted certificate was not a TLS error',
      );
      assert.equal(
        refusedRabbit.received.length,
        0,
        'a broker whose certificate is not trusted got the message',
      );
      t.diagnostic(`untrusted: ${String(entryOfRefused.attempts[0]?.errorDetail)}`);

      await serve.stop();
      const secrets = [amqps.secret, rediss.secret, mqtts.secret, natsTls.secret, refused.secret, key.secret];
      for (const secret of secrets)
        assert.ok(!serve.output().includes(secret), 'a secret appeared in the log of serve');
      assertNoLeak(h, [], secrets);
    });
  },
);
