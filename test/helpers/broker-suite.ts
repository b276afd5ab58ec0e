import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { madeBeforeThePolicy } from './broker-policy.js';
import { EVENT_TYPE, type BrokerCase, type BrokerMessage } from './brokers.js';
import type { Cleanup } from './cleanup.js';
import { publishEvent, waitForDeliveries } from './events.js';
import { assertNoLeak, makeSignedInTenant } from './factories.js';
import { startHarness, type Harness, type TestSession } from './harness.js';
import { startStallingProxy, startTcpProxy } from './tcp-proxy.js';
import { waitUntil } from './wait.js';

// What every broker of contract §21 does alike, written once for the table in brokers.ts (STYLE.md
// habit 8: one table, one loop). A broker's test file calls these with its row and adds what only it
// does; each file still runs on its own.

const CONNECTIONS = '/api/v1/integrations/connections';

/** The hub of a describe block: loopback brokers allowed, plaintext allowed, two quick retries. */
const BROKER_ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_RETRY_SCHEDULE: '0,0',
};

/** What a broker's own tests get from the suite's describe block. */
export interface SuiteContext {
  /** The block's hub (started before its first test). */
  harness(): Harness;
  /** A bound connection of `session` to the broker (`url` the machine's broker unless in `config`). */
  connect(
    session: TestSession,
    config: Record<string, unknown>,
    credentials?: Record<string, string>,
  ): Promise<{ id: string; secret: string }>;
}

/** Creates a connection to `broker` and binds `credentials`; answers its ID and signing secret. */
export async function makeBrokerConnection(
  h: Harness,
  broker: BrokerCase,
  session: TestSession,
  config: Record<string, unknown>,
  credentials: Record<string, string> = {},
): Promise<{ id: string; secret: string }> {
  const { connectorKey, displayName } = broker;
  const created = await h.request<{ id: string }>('POST', CONNECTIONS, {
    session,
    body: { connectorKey, displayName, url: broker.url, ...config },
  });
  assert.equal(
    created.status,
    201,
    `creating a ${connectorKey} connection answered ${created.status}: ${created.text}`,
  );
  const bound = await h.request<{ credentials: { signingSecret: string } }>(
    'PUT',
    `${CONNECTIONS}/${created.body.id}/credentials`,
    { session, body: credentials },
  );
  assert.equal(
    bound.status,
    200,
    `binding the ${connectorKey} credentials answered ${bound.status}: ${bound.text}`,
  );
  assert.match(bound.body.credentials.signingSecret, /^whsec_/, 'binding generated no signing secret');
  return { id: created.body.id, secret: bound.body.credentials.signingSecret };
}

/** A describe block with a hub of its own (started before its tests, closed after them). */
async function withHarness(
  name: string,
  broker: BrokerCase,
  env: Record<string, string>,
  body: (ctx: SuiteContext) => void,
) {
  describe(name, { skip: await broker.skipReason() }, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness({ env, workers: { pollMs: 50 } });
    });
    after(() => h.close());
    body({
      harness: () => h,
      connect: (session, config, credentials) =>
        makeBrokerConnection(h, broker, session, config, credentials),
    });
  });
}

const dataOf = (message: BrokerMessage<unknown> | undefined) =>
  (JSON.parse(message?.body ?? 'null') as { data: unknown } | null)?.data;
const idOf = (message: BrokerMessage<unknown>) => (JSON.parse(message.body) as { id: string }).id;

/**
 * The connector's own behaviour against the machine's broker: a signed message, its attempt as a
 * publish, a refused login, test events and per-key order, edits, revoke, pause and replay, and the
 * refusal of credentials in a URL. `more` adds the broker's own tests to the same block.
 */
export async function brokerSuite<M>(
  broker: BrokerCase<M>,
  more: (ctx: SuiteContext) => void = () => {},
): Promise<void> {
  await withHarness(broker.title, broker, { ...BROKER_ENV, DELIVERY_TIMEOUT_MS: '5000' }, (ctx) => {
    const { harness: hub, connect } = ctx;

    test('an event becomes a signed message the broker acknowledged, with {type} in its route, and its attempt reads as a publish', async (t) => {
      const h = hub();
      const login = await broker.login(t);
      const target = await broker.startTarget(t, '{type}');
      const { session } = await makeSignedInTenant(h);
      const connection = await connect(session, target.config, login.credentials);
      const published = await publishEvent(h, session, { type: EVENT_TYPE, data: { order: 42 } });
      const [message] = await target.waitFor(1);
      assert.ok(message, 'the consumer got no message');
      assert.equal(message.route, target.routed, '{type} was not replaced in the route');
      assert.equal(message.header('content-type'), 'application/json', 'the message is not marked as JSON');
      assert.equal(message.header('webhook-id'), published.body.id, 'the webhook-id is not the event ID');
      const verified = new Webhook(connection.secret).verify(message.body, {
        'webhook-id': String(message.header('webhook-id')),
        'webhook-timestamp': String(message.header('webhook-timestamp')),
        'webhook-signature': String(message.header('webhook-signature')),
      });
      assert.deepEqual(
        verified,
        { id: published.body.id, type: EVENT_TYPE, timestamp: published.body.createdAt, data: { order: 42 } },
        'the signed message is not the event as published',
      );
      const [entry] = await waitForDeliveries(h, session, connection.id, { settled: 1 });
      assert.equal(entry.status, 'delivered', 'the log does not show the message as delivered');
      const [attempt] = entry.attempts;
      assert.ok(attempt, 'the log shows no attempt');
      assert.equal(attempt.responseStatus, null, 'a broker attempt shows an HTTP status');
      assert.equal(attempt.remoteAddress, '127.0.0.1', 'the attempt does not show the address it went to');
      const { request, response } = attempt as unknown as {
        request: { method: string; url: string; headers: Record<string, string> };
        response: { body: string };
      };
      assert.equal(request.method, 'PUBLISH', 'the attempt does not read as a publish');
      assert.equal(request.url, target.attemptUrl, 'the attempt does not name the broker and where on it');
      assert.equal(
        request.headers['webhook-id'],
        published.body.id,
        'the attempt does not show the headers sent',
      );
      assert.equal(
        response.body,
        target.answerTo(message),
        'the attempt does not say what the broker answered',
      );
      broker.checkDelivered?.(message, attempt, published.body.id);
      assertNoLeak(h, login.secrets);
    });

    test('a broker that refuses the credentials fails every attempt in words, retried, the password unseen; the right ones are taken', async (t) => {
      const h = hub();
      const secured = await broker.secured(t);
      if (!secured) return t.skip(`no ${broker.connectorKey} broker of the test's own with a login to start`);
      const { session } = await makeSignedInTenant(h);
      const connection = await connect(session, secured.config, secured.wrong);
      await publishEvent(h, session, { type: EVENT_TYPE, data: {} });
      const [entry] = await waitForDeliveries(h, session, connection.id, { statuses: ['failed'] });
      assert.ok(entry, 'the log shows no delivery');
      assert.equal(entry.attemptCount, 3, 'a refused login was not retried on schedule');
      for (const attempt of entry.attempts) {
        assert.equal(attempt.error, 'connection_error', 'a refused login is not a failed attempt');
        assert.match(
          String(attempt.errorDetail),
          broker.words.refusedCredentials,
          'the attempt does not say the broker refused the credentials',
        );
      }
      assert.equal((await secured.messages?.())?.length ?? 0, 0, 'a refused login published something');
      // Re-bound with the right login, the next event gets past the login.
      const rebound = await h.request('PUT', `${CONNECTIONS}/${connection.id}/credentials`, {
        session,
        body: secured.right,
      });
      assert.equal(rebound.status, 200, rebound.text);
      await publishEvent(h, session, { type: 'order.shipped', data: {} });
      if (secured.afterLogin) {
        const log = await waitForDeliveries(h, session, connection.id, { statuses: ['failed', 'failed'] });
        const next = log.find((d) => d.eventType === 'order.shipped');
        assert.match(
          String(next?.attempts[0]?.errorDetail),
          secured.afterLogin,
          'the right login was not taken',
        );
      } else {
        await waitForDeliveries(h, session, connection.id, { statuses: ['delivered', 'failed'] });
      }
      assertNoLeak(h, [String(secured.wrong.password), ...secured.secrets]);
    });

    test('a test event is published like any event, and a per-key connection keeps publish order', async (t) => {
      const h = hub();
      const login = await broker.login(t);
      const target = await broker.startTarget(t, 'k');
      const { session } = await makeSignedInTenant(h);
      const connection = await connect(session, { ...target.config, ordering: 'per-key' }, login.credentials);
      const tested = await h.request<{ eventId: string }>('POST', `${CONNECTIONS}/${connection.id}/test`, {
        session,
        body: {},
      });
      assert.equal(tested.status, 202, tested.text);
      const [first] = await target.waitFor(1);
      assert.equal(first?.header('webhook-id'), tested.body.eventId, 'the test event was not published');
      const events = Array.from({ length: 20 }, (_, n) => ({
        type: EVENT_TYPE,
        data: { n },
        orderingKey: 'A',
      }));
      const batch = await h.request('POST', '/api/v1/integrations/events/batch', {
        session,
        body: { events },
      });
      assert.equal(batch.status, 202, batch.text);
      const messages = await target.waitFor(21);
      assert.deepEqual(
        messages.slice(1).map((m) => (dataOf(m) as { n: number }).n),
        events.map((e) => e.data.n),
        'messages of one ordering key reached the broker out of publish order',
      );
    });

    test('an edit of where it publishes takes effect at the next publish; once revoked, nothing is published', async (t) => {
      const h = hub();
      const login = await broker.login(t);
      const beforeEdit = await broker.startTarget(t, 'k');
      const afterEdit = await broker.startTarget(t, 'k');
      const { session } = await makeSignedInTenant(h);
      const connection = await connect(session, beforeEdit.config, login.credentials);
      await publishEvent(h, session, { type: EVENT_TYPE, data: { n: 1 } });
      await beforeEdit.waitFor(1);
      const edited = await h.request('PATCH', `${CONNECTIONS}/${connection.id}`, {
        session,
        body: afterEdit.config,
      });
      assert.equal(edited.status, 200, edited.text);
      await publishEvent(h, session, { type: EVENT_TYPE, data: { n: 2 } });
      const [moved] = await afterEdit.waitFor(1);
      assert.deepEqual(dataOf(moved), { n: 2 }, 'the event after the edit did not go to the new place');
      assert.equal(moved?.route, afterEdit.routed, 'the event after the edit did not go to the new route');
      const revoked = await h.request('POST', `${CONNECTIONS}/${connection.id}/revoke`, {
        session,
        body: {},
      });
      assert.equal(revoked.status, 200, revoked.text);
      await publishEvent(h, session, { type: EVENT_TYPE, data: { n: 3 } }, { status: 202 });
      await waitForDeliveries(h, session, connection.id, { statuses: ['delivered', 'delivered'] });
      const total = (await beforeEdit.messages()).length + (await afterEdit.messages()).length;
      assert.equal(total, 2, 'a revoked connection published');
    });

    test('paused, nothing is published (and the session is closed within 5 s); resumed with replay, the skipped event is', async (t) => {
      const h = hub();
      const login = await broker.login(t);
      const target = await broker.startTarget(t, 'k');
      const { session } = await makeSignedInTenant(h);
      const connection = await connect(session, target.config, login.credentials);
      await publishEvent(h, session, { type: EVENT_TYPE, data: { n: 0 } });
      await target.waitFor(1);
      const sessions = login.sessions;
      if (sessions) assert.equal(await sessions(), 1, 'the hub does not hold one session with the broker');
      const paused = await h.request('POST', `${CONNECTIONS}/${connection.id}/pause`, { session, body: {} });
      assert.equal(paused.status, 200, paused.text);
      if (sessions) {
        const pausedAt = Date.now();
        await waitUntil(async () => (await sessions()) === 0, {
          message: "the hub's session with the broker to close after the pause",
          timeoutMs: 6_000,
        });
        assert.ok(Date.now() - pausedAt <= 5_500, 'the session outlived the pause by more than 5 s');
      }
      await publishEvent(h, session, { type: EVENT_TYPE, data: { n: 1 } });
      await waitForDeliveries(h, session, connection.id, { statuses: ['delivered', 'skipped'] });
      assert.equal((await target.messages()).length, 1, 'a paused connection published');
      const resumed = await h.request('POST', `${CONNECTIONS}/${connection.id}/resume`, {
        session,
        body: { replaySkipped: true },
      });
      assert.equal(resumed.status, 200, resumed.text);
      const [, replayed] = await target.waitFor(2);
      assert.deepEqual(dataOf(replayed), { n: 1 }, 'the replayed message is not the skipped event');
      await waitForDeliveries(h, session, connection.id, { statuses: ['delivered', 'delivered'] });
    });

    test('a URL with credentials in it, or a place the broker cannot name, is refused with 400, and so are credentials that do not go together', async (t) => {
      const h = hub();
      const { session } = await makeSignedInTenant(h);
      const { connectorKey, displayName } = broker;
      for (const body of broker.invalid) {
        const r = await h.request<{ code: string }>('POST', CONNECTIONS, {
          session,
          body: { connectorKey, displayName, ...body },
        });
        const what = JSON.stringify(body).slice(0, 120);
        assert.equal(r.status, 400, `${what} answered ${r.status}`);
        assert.equal(r.body.code, 'validation_failed', `${what} is not refused as invalid`);
        assert.ok(!r.text.includes(broker.invalidSecret), 'the refusal quotes the credentials');
      }
      if (broker.invalidCredentials.length === 0) return;
      const target = await broker.startTarget(t, 'k');
      const created = await h.request<{ id: string }>('POST', CONNECTIONS, {
        session,
        body: { connectorKey, displayName, url: broker.url, ...target.config },
      });
      assert.equal(created.status, 201, created.text);
      for (const credentials of broker.invalidCredentials) {
        const bound = await h.request<{ code: string }>(
          'PUT',
          `${CONNECTIONS}/${created.body.id}/credentials`,
          {
            session,
            body: credentials,
          },
        );
        assert.equal(bound.status, 400, `${Object.keys(credentials).join(' and ')} answered ${bound.status}`);
        assert.equal(
          bound.body.code,
          'validation_failed',
          `${Object.keys(credentials).join(' and ')} is not refused as invalid`,
        );
      }
    });

    more(ctx);
  });
}

/**
 * A connection of a new tenant to a target of the test's own on `broker`, reached through a proxy
 * listening on `proxyPort`, with a first event delivered through it.
 */
async function deliveringThrough<M>(t: Cleanup, ctx: SuiteContext, broker: BrokerCase<M>, proxyPort: number) {
  const h = ctx.harness();
  const target = await broker.startTarget(t, 'k');
  const login = await broker.login(t);
  const { session } = await makeSignedInTenant(h);
  const { id } = await ctx.connect(
    session,
    { url: broker.urlAt(`127.0.0.1:${proxyPort}`), ...target.config },
    login.credentials,
  );
  await publishEvent(h, session, { type: EVENT_TYPE, data: { n: 1 } });
  await target.waitFor(1);
  await waitForDeliveries(h, session, id, { statuses: ['delivered'] });
  return { h, session, id, target, login };
}

/** What the fault suites add to their blocks, each with the block's hub. */
export interface FaultExtras {
  /** To the block of a broker that goes away (DELIVERY_TIMEOUT_MS=1500). */
  goesAway?(ctx: SuiteContext): void;
  /** To the block of a hub without plaintext. */
  noPlaintext?(ctx: SuiteContext): void;
}

/**
 * A broker that goes away and comes back (a TCP proxy on loopback in front of the machine's broker,
 * cut and restored), one that takes publishes but stops answering, one that goes away with a publish
 * in flight, and a hub that allows no plaintext or an address §8 refuses.
 */
export async function brokerFaultSuites<M>(broker: BrokerCase<M>, extras: FaultExtras = {}): Promise<void> {
  const { connectorKey: key } = broker;

  await withHarness(
    `${key}: a broker that goes away`,
    broker,
    { ...BROKER_ENV, DELIVERY_TIMEOUT_MS: '1500' },
    (ctx) => {
      test('fails the attempts while it is away, and is reconnected to once it is back, without a restart', async (t) => {
        const proxy = await startTcpProxy('127.0.0.1', broker.port);
        t.after(() => proxy.close());
        const { h, session, id, target, login } = await deliveringThrough(t, ctx, broker, proxy.port);

        await proxy.cut();
        const away = await publishEvent(h, session, { type: EVENT_TYPE, data: { n: 2 } });
        const log = await waitForDeliveries(h, session, id, { statuses: ['delivered', 'failed'] });
        const failed = log.find((d) => d.eventId === away.body.id);
        assert.ok(failed, 'the log does not show the event published while the broker was away');
        assert.equal(failed.attemptCount, 3, 'the attempts while the broker was away were not retried');
        for (const attempt of failed.attempts) {
          assert.equal(attempt.error, 'connection_error', 'a broker that is away is not a connection error');
          assert.ok(attempt.errorDetail, 'a failed attempt says nothing of why');
        }

        await proxy.restore();
        const retried = await h.request('POST', `${CONNECTIONS}/${id}/events/${failed.id}/retry`, {
          session,
          body: {},
        });
        assert.equal(retried.status, 202, `retrying answered ${retried.status}: ${retried.text}`);
        const [, second] = await target.waitFor(2);
        assert.equal(
          second && idOf(second),
          away.body.id,
          'the broker that came back did not get the retried event',
        );
        assert.deepEqual(dataOf(second), { n: 2 }, 'the broker that came back did not get the retried event');
        await waitForDeliveries(h, session, id, { statuses: ['delivered', 'delivered'] });
        assertNoLeak(h, login.secrets);
      });

      test('a broker that stops answering: the attempt times out, and the retry gets through on a new session', async (t) => {
        // Its answers while stalled are lost, as from a broker that never sent them.
        const proxy = await startStallingProxy('127.0.0.1', broker.port, { discard: true });
        t.after(() => proxy.close());
        const { h, session, id, target } = await deliveringThrough(t, ctx, broker, proxy.port);

        proxy.stall();
        const stalled = await publishEvent(h, session, { type: EVENT_TYPE, data: { n: 2 } });
        const log = await waitForDeliveries(
          h,
          session,
          id,
          (deliveries) => deliveries.some((d) => d.eventId === stalled.body.id && d.attempts.length > 0),
          { message: 'a timed-out attempt', timeoutMs: 15_000 },
        );
        const attempt = log.find((d) => d.eventId === stalled.body.id)?.attempts[0];
        assert.equal(
          attempt?.error,
          'timeout',
          'no acknowledgement within DELIVERY_TIMEOUT_MS is not a timeout',
        );
        assert.match(
          String(attempt?.errorDetail),
          broker.words.timeout,
          'the timeout does not say what was missing',
        );
        // The stalled publish reached the broker; only its answer was lost.
        await target.waitFor(2);

        proxy.flow();
        const settled = await waitForDeliveries(h, session, id, { settled: 2 }, { timeoutMs: 15_000 });
        const entry = settled.find((d) => d.eventId === stalled.body.id);
        if (entry?.status === 'failed') {
          const retried = await h.request('POST', `${CONNECTIONS}/${id}/events/${entry.id}/retry`, {
            session,
            body: {},
          });
          assert.equal(retried.status, 202, retried.text);
        }
        const done = await waitForDeliveries(
          h,
          session,
          id,
          { statuses: ['delivered', 'delivered'] },
          { timeoutMs: 15_000 },
        );
        const copies = (await target.messages()).filter((m) => idOf(m) === stalled.body.id);
        assert.ok(copies[0], 'the event published while the broker stalled never arrived');
        if (target.answerToRetryOf) {
          const last = done.find((d) => d.eventId === stalled.body.id)?.attempts.at(-1);
          assert.equal(
            (last?.response as { body?: string } | null)?.body,
            target.answerToRetryOf(copies[0]),
            'the retry was not recognised by the broker as the message it already had',
          );
          assert.equal(copies.length, 1, 'the broker stored the retried event more than once');
        }
      });

      extras.goesAway?.(ctx);
    },
  );

  const closedInFlight = broker.words.closedInFlight;
  if (closedInFlight)
    await withHarness(
      `${key}: a broker that goes away with a publish in flight`,
      broker,
      { ...BROKER_ENV, DELIVERY_TIMEOUT_MS: '10000' },
      (ctx) => {
        test('fails that attempt at once, in words, and the retry reaches the broker on a new connection', async (t) => {
          const proxy = await startStallingProxy('127.0.0.1', broker.port, { discard: true });
          t.after(() => proxy.close());
          const { h, session, id, target } = await deliveringThrough(t, ctx, broker, proxy.port);

          proxy.stall();
          const inFlight = await publishEvent(h, session, { type: EVENT_TYPE, data: { n: 2 } });
          // The broker has it, so the publish is out and waits for its acknowledgement: now it goes away.
          await target.waitFor(2);
          proxy.drop();
          proxy.flow();
          const done = await waitForDeliveries(h, session, id, { statuses: ['delivered', 'delivered'] });
          const [first, ...retries] = done.find((d) => d.eventId === inFlight.body.id)?.attempts ?? [];
          assert.equal(
            first?.error,
            'connection_error',
            'an attempt in flight was not failed when the broker went',
          );
          assert.equal(
            first?.errorDetail,
            closedInFlight,
            'the failed attempt does not say the connection closed under it',
          );
          assert.ok(Number(first?.durationMs) < 10_000, 'the attempt in flight waited for its timeout');
          assert.ok(retries.length > 0, 'the event was not retried');
          if (!target.answerToRetryOf) {
            const copies = (await target.messages()).filter((m) => idOf(m) === inFlight.body.id);
            assert.ok(copies.length >= 2, 'the retry did not publish the event again (at least once)');
          }
        });
      },
    );

  await withHarness(
    `${key}: a hub without plaintext`,
    broker,
    { DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32', DELIVERY_RETRY_SCHEDULE: '0' },
    (ctx) => {
      const { harness: hub, connect } = ctx;

      test(`refuses ${key}: (no TLS) unless DELIVERY_ALLOW_HTTP=true, and publishes nothing`, async (t) => {
        const h = hub();
        const target = await broker.startTarget(t, 'k');
        const login = await broker.login(t);
        const { session } = await makeSignedInTenant(h);
        const id = await madeBeforeThePolicy(
          h,
          session,
          key,
          { url: broker.url, ...target.config },
          broker.tlsUrl,
          async (body) => (await connect(session, body, login.credentials)).id,
        );
        await publishEvent(h, session, { type: EVENT_TYPE, data: {} });
        const [entry] = await waitForDeliveries(h, session, id, { statuses: ['failed'] });
        assert.ok(entry, 'the log shows no delivery');
        assert.equal(entry.attempts[0]?.error, 'destination_forbidden', 'plaintext was not refused');
        assert.match(
          String(entry.attempts[0]?.errorDetail),
          /DELIVERY_ALLOW_HTTP/,
          'the refusal does not say why',
        );
        assert.equal((await target.messages()).length, 0, 'a refused destination got a message');
      });

      test('refuses a broker address outside DELIVERY_ALLOWED_CIDRS, in a refused range (§8), at connect', async (t) => {
        const h = hub();
        const target = await broker.startTarget(t, 'k');
        const { session } = await makeSignedInTenant(h);
        const { url, allowedUrl, address } = broker.refusedAddress;
        const id = await madeBeforeThePolicy(
          h,
          session,
          key,
          { url, ...target.config },
          allowedUrl,
          async (body) => (await connect(session, body)).id,
        );
        await publishEvent(h, session, { type: EVENT_TYPE, data: {} });
        const [entry] = await waitForDeliveries(h, session, id, { statuses: ['failed'] });
        assert.equal(entry?.attempts[0]?.error, 'destination_forbidden', `${address} was connected to`);
        assert.ok(
          String(entry?.attempts[0]?.errorDetail).includes(`${address} is in a refused range`),
          `the refusal does not say why: ${entry?.attempts[0]?.errorDetail}`,
        );
      });

      extras.noPlaintext?.(ctx);
    },
  );
}
