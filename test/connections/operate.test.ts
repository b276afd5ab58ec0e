import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { publishEvent, waitForDeliveries, type Delivery } from '../helpers/events.js';
import {
  assertNoLeak,
  makeKey,
  makeSignedInTenant,
  makeUser,
  makeWebhookConnection,
  signIn,
} from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import {
  auditOf,
  bindCredentials,
  CONNECTIONS,
  createConnection,
  logOf,
  operate,
  patchConnection,
  pause,
  readConnection,
  resume,
  webhookHeaders,
  type Connection,
} from '../helpers/operate.js';
import { startReceiver } from '../helpers/receiver.js';

// docs/api/connections.md, the connection's side: edit (PATCH), pause and resume. Receivers listen on 127.0.0.1
// only; names used as "other hosts" resolve to it through the workers' resolver below.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  // A failed attempt is retried 2 minutes later: a test moves the app's clock (setNow) to make it due.
  // (Not more: a receiver checks the webhook-timestamp against its own clock, 5 minutes either way.)
  DELIVERY_RETRY_SCHEDULE: '120,120',
  DELIVERY_TIMEOUT_MS: '5000',
  // The log is polled often; the per-credential limit is not what these tests are about.
  RATE_LIMIT_PER_MINUTE: '1000000',
};
const LATER = 3 * 60_000;

let h: Harness;
const names = new Map<string, string>([
  ['old.operate.test', '127.0.0.1'],
  ['new.operate.test', '127.0.0.1'],
]);
// Secrets seen by this file: none may ever appear in a log line, nor in an answer (those shown once:
// only in the answer that generated them).
const neverShown: string[] = [];
const shownOnce: string[] = [];

before(async () => {
  h = await startHarness({
    env: ENV,
    workers: {
      pollMs: 50,
      // One attempt at a time: the order in which replayed deliveries go is the order they arrive.
      concurrency: 1,
      resolve: async (hostname) => {
        const address = names.get(hostname);
        if (!address) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
        return [{ address, family: 4 }];
      },
    },
  });
});
after(() => h.close());

async function hook(session: TestSession, url: string, extra: Record<string, unknown> = {}) {
  const made = await makeWebhookConnection(h, session, url, extra);
  shownOnce.push(made.secret);
  return made;
}

/** Waits until the log of `id` shows the delivery of `eventId` as `wanted` says. */
async function deliveryOf(
  session: TestSession,
  id: string,
  eventId: string,
  wanted: (d: Delivery) => boolean,
  message: string,
): Promise<Delivery> {
  const log = await waitForDeliveries(
    h,
    session,
    id,
    (ds) => ds.some((d) => d.eventId === eventId && wanted(d)),
    { message },
  );
  return log.find((d) => d.eventId === eventId)!;
}

const retrying = (d: Delivery) => d.status === 'retrying' && d.attemptCount === 1;

describe('edit (PATCH)', () => {
  test('displayName and config change one part at a time; omitted parts stay; each change is audited', async () => {
    const { session, user } = await makeSignedInTenant(h);
    const receiver = 'https://hooks.example.com/hubgate';
    const created = await createConnection(h, session, {
      connectorKey: 'webhook',
      displayName: 'orders',
      url: receiver,
      eventTypes: ['order.*'],
    });
    await bindCredentials(h, session, created.id, {});

    const renamed = await patchConnection(h, session, created.id, { displayName: 'orders (EU)' });
    assert.equal(renamed.status, 200, `renaming a connection answered ${renamed.status}: ${renamed.text}`);
    assert.deepEqual(
      renamed.body,
      { ...created, displayName: 'orders (EU)', credentialsBound: true, deliveryEnabled: true },
      'a PATCH of displayName changed something else, or did not change the name',
    );

    const retyped = await patchConnection(h, session, created.id, { eventTypes: ['employee.*'] });
    assert.equal(retyped.status, 200, `changing eventTypes answered ${retyped.status}: ${retyped.text}`);
    assert.deepEqual(
      retyped.body.config,
      { url: receiver, eventTypes: ['employee.*'] },
      'a PATCH of eventTypes alone did not keep the url, or did not take the new eventTypes',
    );
    assert.equal(retyped.body.displayName, 'orders (EU)', 'a PATCH of config alone lost the new displayName');
    assert.deepEqual(
      await readConnection(h, session, created.id),
      retyped.body,
      'the connection read back differs from the PATCH answer',
    );

    // The new eventTypes decide the fan-out from now on.
    const order = await publishEvent(h, session, { type: 'order.created' });
    assert.equal(order.body.deliveries, 0, 'an event the new eventTypes exclude still fans out to it');
    const employee = await publishEvent(h, session, { type: 'employee.created' });
    assert.equal(employee.body.deliveries, 1, 'an event the new eventTypes include does not fan out to it');

    const entries = (await auditOf(h, session, created.id)).filter(
      (e) => !['connection.create', 'connection.credentials.bind'].includes(e.action),
    );
    assert.ok(
      entries.length >= 2,
      `two PATCHes that changed the connection left ${entries.length} audit entries: ${JSON.stringify(entries)}`,
    );
    for (const entry of entries) {
      assert.match(entry.action, /^connection\./, `an edit is audited as ${entry.action}`);
      assert.equal(entry.actorType, 'user', 'the edit is not audited as made by the signed-in user');
      assert.equal(entry.actorId, user.id, 'the edit is audited as made by someone else');
    }
  });

  test('an empty PATCH (every part optional) is 200 and changes nothing', async () => {
    const { session } = await makeSignedInTenant(h);
    const created = await createConnection(h, session, {
      connectorKey: 'webhook',
      displayName: 'orders',
      url: 'https://hooks.example.com/hubgate',
    });
    const empty = await patchConnection(h, session, created.id, {});
    assert.equal(empty.status, 200, `an empty PATCH answered ${empty.status}: ${empty.text}`);
    assert.deepEqual(empty.body, created, 'an empty PATCH changed the connection');
  });

  test('URLs are checked again (400 destination_forbidden) and a refused PATCH changes nothing', async () => {
    const { session } = await makeSignedInTenant(h);
    const webhook = await createConnection(h, session, {
      connectorKey: 'webhook',
      displayName: 'w',
      url: 'https://hooks.example.com/a',
    });
    const http = await createConnection(h, session, {
      connectorKey: 'http',
      displayName: 'h',
      url: 'https://erp.example.com/in',
    });
    const forbidden = [
      'https://localhost/x',
      'https://api.localhost:8443/x',
      'https://metadata.google.internal/computeMetadata/v1/',
      'https://db.corp.internal/',
      'https://10.1.2.3/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::ffff:10.0.0.1]/',
      'https://[fd00::1]/x',
      'https://user:pw@hooks.example.com/',
      'ftp://hooks.example.com/',
    ];
    for (const connection of [webhook, http]) {
      for (const url of forbidden) {
        const r = await patchConnection(h, session, connection.id, { url, displayName: 'changed' });
        assert.equal(
          r.status,
          400,
          `${connection.connectorKey} PATCH url ${url} answered ${r.status}: ${r.text}`,
        );
        assert.equal(
          (r.body as unknown as { code: string }).code,
          'destination_forbidden',
          `${connection.connectorKey} PATCH url ${url} is refused with another code than destination_forbidden`,
        );
        assert.ok(!r.text.includes('user:pw'), 'a password in a refused URL is echoed back');
      }
      assert.deepEqual(
        await readConnection(h, session, connection.id),
        connection,
        `a refused PATCH changed the ${connection.connectorKey} connection (its displayName included)`,
      );
    }
  });

  test('unknown fields, fields of another connector, credentials and bad values are 400 naming the field; nothing changes', async () => {
    const { session } = await makeSignedInTenant(h);
    const webhook = await createConnection(h, session, {
      connectorKey: 'webhook',
      displayName: 'w',
      url: 'https://hooks.example.com/a',
    });
    const slack = await createConnection(h, session, { connectorKey: 'slack', displayName: 's' });
    const http = await createConnection(h, session, {
      connectorKey: 'http',
      displayName: 'h',
      url: 'https://erp.example.com/in',
    });
    const cases: Array<[string, Connection, unknown, string]> = [
      ['unknown field', webhook, { secret: 'x' }, 'secret'],
      ['unknown field beside a valid one', webhook, { displayName: 'ok', colour: 'red' }, 'colour'],
      ['a credential field', webhook, { signingSecret: `whsec_${'A'.repeat(32)}` }, 'signingSecret'],
      ['an http credential field', http, { headerValue: 'x' }, 'headerValue'],
      ['another connector', webhook, { connectorKey: 'slack' }, 'connectorKey'],
      ['the status', webhook, { status: 'paused' }, 'status'],
      ['the id', webhook, { id: 'con_0000000000000000000000' }, 'id'],
      ['method on a webhook', webhook, { method: 'PUT' }, 'method'],
      ['url on slack', slack, { url: 'https://hooks.example.com/' }, 'url'],
      ['bad http method', http, { method: 'GET' }, 'method'],
      ['empty displayName', webhook, { displayName: '' }, 'displayName'],
      ['blank displayName', webhook, { displayName: '   ' }, 'displayName'],
      ['long displayName', webhook, { displayName: 'n'.repeat(201) }, 'displayName'],
      ['null url', webhook, { url: null }, 'url'],
      ['relative url', webhook, { url: '/hooks' }, 'url'],
      ['bad event type', webhook, { eventTypes: ['Employee Created'] }, 'eventTypes.0'],
      ['maxPerSecond 0', webhook, { maxPerSecond: 0 }, 'maxPerSecond'],
      ['maxPerSecond 1001', http, { maxPerSecond: 1001 }, 'maxPerSecond'],
      ['maxPerSecond not an integer', slack, { maxPerSecond: 2.5 }, 'maxPerSecond'],
      ['NUL in displayName', webhook, { displayName: 'a\u0000b' }, 'displayName'],
    ];
    for (const [name, connection, body, path] of cases) {
      const r = await patchConnection(h, session, connection.id, body);
      assert.equal(r.status, 400, `${name}: ${r.text}`);
      const problem = r.body as unknown as { code: string; errors?: Array<{ path: string }> };
      assert.equal(problem.code, 'validation_failed', `${name}: refused with ${problem.code}`);
      assert.ok(
        problem.errors?.some((e) => e.path === path),
        `${name}: expected an error at ${path}, got ${JSON.stringify(problem.errors)}`,
      );
    }
    const raw = await h.request('PATCH', `${CONNECTIONS}/${webhook.id}`, {
      session,
      rawBody: '{"displayName": "x",',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(raw.status, 400, `a PATCH that is not JSON answered ${raw.status}`);
    assert.equal(raw.body.code, 'invalid_json', 'a PATCH that is not JSON is refused with another code');
    const text = await h.request('PATCH', `${CONNECTIONS}/${webhook.id}`, {
      session,
      rawBody: 'displayName=x',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(text.status, 415, `a PATCH that is not application/json answered ${text.status}`);
    const array = await patchConnection(h, session, webhook.id, [{ displayName: 'x' }]);
    assert.equal(array.status, 400, `a PATCH whose body is an array answered ${array.status}`);

    for (const connection of [webhook, slack, http]) {
      assert.deepEqual(
        await readConnection(h, session, connection.id),
        connection,
        `a refused PATCH changed the ${connection.connectorKey} connection`,
      );
      const changes = (await auditOf(h, session, connection.id)).filter(
        (e) => e.action !== 'connection.create',
      );
      assert.deepEqual(changes, [], 'a refused PATCH was audited as a change');
    }
  });

  test('a disabled connection cannot be edited: 409 conflict, nothing changes', async () => {
    const { session } = await makeSignedInTenant(h);
    const c = await createConnection(h, session, {
      connectorKey: 'webhook',
      displayName: 'gone',
      url: 'https://hooks.example.com/a',
    });
    const revoked = await h.request<Connection>('POST', `${CONNECTIONS}/${c.id}/revoke`, { session });
    assert.equal(revoked.status, 200, `revoking answered ${revoked.status}`);
    for (const body of [{ displayName: 'back' }, { url: 'https://hooks.example.com/b' }]) {
      const r = await patchConnection(h, session, c.id, body);
      assert.equal(
        r.status,
        409,
        `PATCH ${JSON.stringify(body)} of a disabled connection answered ${r.status}`,
      );
      assert.equal(
        (r.body as unknown as { code: string }).code,
        'conflict',
        'editing a disabled connection is refused with another code than conflict',
      );
    }
    assert.deepEqual(
      await readConnection(h, session, c.id),
      revoked.body,
      'a refused PATCH changed the disabled connection',
    );
  });

  test('events already queued go to the new URL from their next attempt; the webhook keeps its signing secret', async (t) => {
    t.after(() => h.setNow(null));
    const old = await startReceiver(t, (_r, _i, res) => {
      res.statusCode = 500;
      res.end();
    });
    const fresh = await startReceiver(t);
    const { session } = await makeSignedInTenant(h);
    const w = await hook(session, old.url('/old'));
    const event = await publishEvent(h, session, { type: 'order.created', data: { n: 1 } });
    const queued = await deliveryOf(session, w.id, event.body.id, retrying, 'the first attempt failing');

    const moved = await patchConnection(h, session, w.id, { url: fresh.url('/new') });
    assert.equal(moved.status, 200, `moving the webhook answered ${moved.status}: ${moved.text}`);
    assert.equal(moved.body.config.url, fresh.url('/new'), 'the PATCH answer does not show the new url');
    assert.equal(moved.body.credentialsBound, true, 'a webhook lost its signing secret with a new url');
    assert.equal(moved.body.deliveryEnabled, true, 'a webhook with a new url no longer delivers');

    h.setNow(new Date(Date.now() + LATER));
    const [got] = await fresh.waitFor(1);
    assert.equal(got!.url, '/new', 'the queued event went to another path than the new one');
    const verified = new Webhook(w.secret).verify(got!.body, webhookHeaders(got!.headers));
    assert.deepEqual(
      verified,
      { id: event.body.id, type: 'order.created', timestamp: event.body.createdAt, data: { n: 1 } },
      'the queued event is not signed with the secret bound before the PATCH',
    );
    const done = await deliveryOf(session, w.id, event.body.id, (d) => d.status === 'delivered', 'delivered');
    assert.equal(done.id, queued.id, 'the queued event was delivered as another delivery');
    assert.deepEqual(
      done.attempts.map((a) => [a.number, a.responseStatus]),
      [
        [1, 500],
        [2, 200],
      ],
      'the log does not show the failed attempt at the old URL, then the one at the new URL',
    );
    assert.equal(old.received.length, 1, 'the old URL was called again after the PATCH');

    // A new event goes to the new URL as well, signed the same way.
    const next = await publishEvent(h, session, { type: 'order.paid' });
    const [, second] = await fresh.waitFor(2);
    assert.equal(second!.headers['webhook-id'], next.body.id, 'a new event did not go to the new URL');
    new Webhook(w.secret).verify(second!.body, webhookHeaders(second!.headers));
  });

  test('http: a new path or method keeps the credentials', async (t) => {
    const receiver = await startReceiver(t);
    const { session } = await makeSignedInTenant(h);
    const headerValue = 'Bearer path-change-secret-41';
    neverShown.push(headerValue);
    const c = await createConnection(h, session, {
      connectorKey: 'http',
      displayName: 'erp',
      url: receiver.url('/v1/in'),
    });
    await bindCredentials(h, session, c.id, { headerName: 'X-Api-Key', headerValue });
    const r = await patchConnection(h, session, c.id, { url: receiver.url('/v2/in?x=1'), method: 'PUT' });
    assert.equal(r.status, 200, `changing the path and method answered ${r.status}: ${r.text}`);
    assert.equal(r.body.credentialsBound, true, 'a new path on the same host unbound the credentials');
    assert.equal(r.body.deliveryEnabled, true, 'a new path on the same host stopped deliveries');
    assert.deepEqual(
      r.body.config,
      { url: receiver.url('/v2/in?x=1'), method: 'PUT' },
      'the http config does not show the new url and method',
    );
    const event = await publishEvent(h, session, { type: 'a.b' });
    assert.equal(event.body.deliveries, 1, 'the http connection takes no event after a path change');
    const [got] = await receiver.waitFor(1);
    assert.equal(got!.method, 'PUT', 'the http connection does not use its new method');
    assert.equal(got!.url, '/v2/in?x=1', 'the http connection does not use its new path');
    assert.equal(got!.headers['x-api-key'], headerValue, 'the bound header was not sent after a path change');
  });

  test('http: a new host unbinds the credentials; nothing reaches it with the old header, queued events are kept and recovered with the one bound again', async (t) => {
    const since = new Date(Date.now() - 1000).toISOString();
    const old = await startReceiver(t, (_r, i, res) => {
      res.statusCode = i === 0 ? 200 : 500;
      res.end();
    });
    const fresh = await startReceiver(t);
    const { session } = await makeSignedInTenant(h);
    const oldValue = 'old-host-secret-value-17';
    const newValue = 'new-host-secret-value-23';
    neverShown.push(oldValue, newValue);
    const c = await createConnection(h, session, {
      connectorKey: 'http',
      displayName: 'erp',
      url: `http://old.operate.test:${old.port}/erp`,
    });
    await bindCredentials(h, session, c.id, { headerName: 'X-Api-Key', headerValue: oldValue });
    const first = await publishEvent(h, session, { type: 'a.first' });
    await old.waitFor(1);
    assert.equal(old.received[0]!.headers['x-api-key'], oldValue, 'the old host did not get its header');
    const queuedEvent = await publishEvent(h, session, { type: 'a.queued' });
    await deliveryOf(session, c.id, queuedEvent.body.id, retrying, 'the queued event failing once');

    const moved = await patchConnection(h, session, c.id, {
      url: `http://new.operate.test:${fresh.port}/erp`,
    });
    assert.equal(moved.status, 200, `moving the http connection answered ${moved.status}: ${moved.text}`);
    assert.equal(moved.body.credentialsBound, false, 'a new host kept the credentials meant for the old one');
    assert.equal(moved.body.deliveryEnabled, false, 'an http connection without credentials still delivers');
    const read = await readConnection(h, session, c.id);
    assert.equal(read.credentialsBound, false, 'the connection read back still has its credentials');
    assert.equal(read.status, 'active', 'unbinding the credentials changed the status');
    const meanwhile = await publishEvent(h, session, { type: 'a.meanwhile' });
    assert.equal(meanwhile.body.deliveries, 0, 'an event fans out to a connection without credentials');
    // What was queued is kept as a pause keeps it (docs/api/connections.md), replayable.
    const kept = (await logOf(h, session, c.id)).find((d) => d.eventId === queuedEvent.body.id);
    assert.equal(kept?.status, 'skipped', 'the queued event was not kept skipped by the host change');

    await bindCredentials(h, session, c.id, { headerName: 'X-Api-Key', headerValue: newValue });
    const recovered = await operate(h, session, c.id, 'recover', { since, statuses: ['skipped'] });
    assert.equal(recovered.status, 202, `recover answered ${recovered.status}: ${recovered.text}`);
    assert.equal(recovered.body.queued, 1, 'recover did not bring back the event queued before the move');
    const last = await publishEvent(h, session, { type: 'a.last' });
    await fresh.waitFor(2);
    const ids = fresh.received.map((r) => (JSON.parse(r.body) as { id: string }).id).sort();
    assert.deepEqual(
      ids,
      [queuedEvent.body.id, last.body.id].sort(),
      'the new host did not get exactly the queued event and the one published after rebinding',
    );
    for (const r of fresh.received) {
      assert.equal(r.headers['x-api-key'], newValue, 'the new host got another header value than its own');
      assert.ok(!JSON.stringify(r.headers).includes(oldValue), 'the new host got the old credentials');
    }
    assert.equal(old.received.length, 2, 'the old host was called after the PATCH');
    assert.ok(first.body.id, 'the first event was published');
  });

  test('webhook behind OAuth2: a new host unbinds the client credentials, whose bearer token would go there; without them the secret stays', async () => {
    const { session } = await makeSignedInTenant(h);
    const clientSecret = 'webhook-oauth2-client-secret-31';
    neverShown.push(clientSecret);
    const behindOAuth = await createConnection(h, session, {
      connectorKey: 'webhook',
      displayName: 'behind oauth2',
      url: 'http://old.operate.test:1/hook',
    });
    await bindCredentials(h, session, behindOAuth.id, {
      oauth2ClientCredentials: { tokenUrl: 'http://old.operate.test:1/token', clientId: 'hub', clientSecret },
    });
    // An OPERATOR may edit the URL; only an ADMIN binds: the token must not follow the URL elsewhere.
    const moved = await patchConnection(h, session, behindOAuth.id, {
      url: 'http://new.operate.test:1/hook',
    });
    assert.equal(moved.status, 200, `moving the webhook answered ${moved.status}: ${moved.text}`);
    assert.equal(
      moved.body.credentialsBound,
      false,
      'a new host kept the client credentials meant for the old one',
    );

    const plain = await createConnection(h, session, {
      connectorKey: 'webhook',
      displayName: 'signed only',
      url: 'http://old.operate.test:1/hook',
    });
    await bindCredentials(h, session, plain.id, {});
    const movedPlain = await patchConnection(h, session, plain.id, { url: 'http://new.operate.test:1/hook' });
    assert.equal(movedPlain.status, 200, movedPlain.text);
    assert.equal(
      movedPlain.body.credentialsBound,
      true,
      'a signing secret, never sent anywhere, was unbound by a new host',
    );
  });

  test('a paused connection can be edited and stays paused', async () => {
    const { session } = await makeSignedInTenant(h);
    const w = await hook(session, 'https://hooks.example.com/p');
    const paused = await pause(h, session, w.id);
    const r = await patchConnection(h, session, w.id, { displayName: 'still paused' });
    assert.equal(r.status, 200, `editing a paused connection answered ${r.status}: ${r.text}`);
    assert.equal(r.body.status, 'paused', 'editing a paused connection resumed it');
    assert.equal(r.body.pausedAt, paused.pausedAt, 'editing a paused connection moved pausedAt');
    assert.equal(r.body.pausedReason, 'manual', 'editing a paused connection changed why it is paused');
    assert.equal(r.body.deliveryEnabled, false, 'an edited paused connection delivers');
  });
});

describe('pause and resume', () => {
  test('pause: paused (manual), idempotent, not delivering; resume: active again, replayed 0; each change audited once', async () => {
    const { session, user } = await makeSignedInTenant(h);
    const w = await hook(session, 'https://hooks.example.com/p');
    const before = await readConnection(h, session, w.id);
    assert.equal(before.pausedAt, null, 'a new connection shows a pausedAt');
    assert.equal(before.pausedReason, null, 'a new connection shows a pausedReason');

    const first = await pause(h, session, w.id);
    assert.equal(first.pausedReason, 'manual', 'a pause by hand is not reason manual');
    assert.ok(
      first.pausedAt && Math.abs(Date.parse(first.pausedAt) - Date.now()) < 60_000,
      `pausedAt is not the time of the pause: ${first.pausedAt}`,
    );
    assert.equal(first.deliveryEnabled, false, 'a paused connection shows deliveryEnabled true');
    assert.equal(first.credentialsBound, true, 'pausing unbound the credentials');
    const again = await operate<Connection>(h, session, w.id, 'pause');
    assert.equal(again.status, 200, `pausing a paused connection answered ${again.status}: ${again.text}`);
    assert.deepEqual(again.body, first, 'pausing again answered differently (pausedAt moved?)');
    assert.deepEqual(
      await readConnection(h, session, w.id),
      first,
      'the paused connection reads differently',
    );
    const listed = await h.request('GET', CONNECTIONS, { session });
    assert.deepEqual(
      listed.body.data.find((c: { id: string }) => c.id === w.id),
      first,
      'the list shows the paused connection differently from a read',
    );

    const resumed = await resume(h, session, w.id);
    assert.equal(resumed.replayed, 0, 'a resume without replaySkipped replayed deliveries');
    assert.deepEqual(
      resumed.connection,
      { ...before, credentialsBound: true, deliveryEnabled: true },
      'a resumed connection is not as it was before the pause',
    );
    const noop = await resume(h, session, w.id, { replaySkipped: true });
    assert.equal(noop.replayed, 0, 'resuming an active connection replayed deliveries');
    assert.deepEqual(noop.connection, resumed.connection, 'resuming an active connection changed it');

    const entries = await auditOf(h, session, w.id);
    const pauses = entries.filter((e) => /pause/.test(e.action));
    const resumes = entries.filter((e) => /resume/.test(e.action));
    assert.equal(pauses.length, 1, `one pause, then a no-op: ${pauses.length} pause entries`);
    assert.equal(resumes.length, 1, `one resume, then a no-op: ${resumes.length} resume entries`);
    for (const entry of [...pauses, ...resumes]) {
      assert.equal(entry.actorId, user.id, `${entry.action} is not audited as the signed-in user's`);
      assert.equal(entry.actorType, 'user', `${entry.action} is audited with actorType ${entry.actorType}`);
    }
  });

  test('a disabled connection: pause and resume are 409 conflict and change nothing', async () => {
    const { session } = await makeSignedInTenant(h);
    const w = await hook(session, 'https://hooks.example.com/p');
    const revoked = await h.request<Connection>('POST', `${CONNECTIONS}/${w.id}/revoke`, { session });
    for (const [action, body] of [
      ['pause', undefined],
      ['resume', {}],
      ['resume', { replaySkipped: true }],
    ] as const) {
      const r = await operate(h, session, w.id, action, body);
      assert.equal(r.status, 409, `${action} of a disabled connection answered ${r.status}: ${r.text}`);
      assert.equal(r.body.code, 'conflict', `${action} of a disabled connection: code ${r.body.code}`);
    }
    assert.deepEqual(
      await readConnection(h, session, w.id),
      revoked.body,
      'pause or resume changed a disabled connection',
    );
  });

  test('resume validates its body: replaySkipped must be a boolean, no other field', async () => {
    const { session } = await makeSignedInTenant(h);
    const w = await hook(session, 'https://hooks.example.com/p');
    const paused = await pause(h, session, w.id);
    for (const [body, path] of [
      [{ replaySkipped: 'yes' }, 'replaySkipped'],
      [{ replaySkipped: 1 }, 'replaySkipped'],
      [{ replay: true }, 'replay'],
    ] as const) {
      const r = await operate(h, session, w.id, 'resume', body);
      assert.equal(r.status, 400, `resume ${JSON.stringify(body)} answered ${r.status}`);
      assert.equal(r.body.code, 'validation_failed', `resume ${JSON.stringify(body)}: ${r.body.code}`);
      assert.ok(
        r.body.errors?.some((e: { path: string }) => e.path === path),
        `resume ${JSON.stringify(body)}: no error at ${path}: ${JSON.stringify(r.body.errors)}`,
      );
    }
    const raw = await h.request('POST', `${CONNECTIONS}/${w.id}/resume`, {
      session,
      rawBody: '{',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(raw.status, 400, `resume with a broken JSON body answered ${raw.status}`);
    assert.equal(raw.body.code, 'invalid_json', 'resume with a broken JSON body: another code');
    assert.deepEqual(
      await readConnection(h, session, w.id),
      paused,
      'a refused resume resumed the connection',
    );
  });

  test('while paused nothing is sent: a retrying delivery becomes skipped, new events are recorded skipped and counted; resume alone leaves them skipped', async (t) => {
    t.after(() => h.setNow(null));
    const receiver = await startReceiver(t, (_r, i, res) => {
      res.statusCode = i === 0 ? 500 : 200;
      res.end();
    });
    const control = await startReceiver(t);
    const { session } = await makeSignedInTenant(h);
    const other = await makeSignedInTenant(h);
    const w = await hook(session, receiver.url());
    const witness = await hook(other.session, control.url());
    const e1 = await publishEvent(h, session, { type: 'order.created' });
    const queued = await deliveryOf(session, w.id, e1.body.id, retrying, 'the first attempt failing');

    await pause(h, session, w.id);
    const afterPause = await logOf(h, session, w.id);
    assert.deepEqual(
      afterPause.map((d) => [d.id, d.status, d.attemptCount, d.nextAttemptAt]),
      [[queued.id, 'skipped', 1, null]],
      'pausing did not turn the retrying delivery into a skipped one with its attempt kept',
    );
    const e2 = await publishEvent(h, session, { type: 'order.created' });
    assert.equal(
      e2.body.deliveries,
      1,
      'an event published while paused does not count its skipped delivery',
    );
    const log = await logOf(h, session, w.id);
    assert.deepEqual(
      log.map((d) => [d.eventId, d.status, d.attemptCount]),
      [
        [e2.body.id, 'skipped', 0],
        [e1.body.id, 'skipped', 1],
      ],
      'the event published while paused is not recorded as a skipped delivery',
    );

    // Past the retry's due time: a worker that still sent anything to the paused connection would
    // have sent it by the time the witness (another tenant's connection) is delivered to.
    h.setNow(new Date(Date.now() + LATER));
    await publishEvent(h, other.session, { type: 'order.created' });
    await waitForDeliveries(h, other.session, witness.id, { statuses: ['delivered'] });
    assert.equal(receiver.received.length, 1, 'something was sent to the paused connection');

    const resumed = await resume(h, session, w.id);
    assert.equal(resumed.replayed, 0, 'resume without replaySkipped replayed deliveries');
    const e3 = await publishEvent(h, session, { type: 'order.created' });
    assert.equal(e3.body.deliveries, 1, 'the resumed connection takes no new event');
    await deliveryOf(session, w.id, e3.body.id, (d) => d.status === 'delivered', 'the new event delivered');
    assert.deepEqual(
      (await logOf(h, session, w.id)).map((d) => [d.eventId, d.status]),
      [
        [e3.body.id, 'delivered'],
        [e2.body.id, 'skipped'],
        [e1.body.id, 'skipped'],
      ],
      'resume without replaySkipped did not leave the skipped deliveries skipped',
    );
    assert.equal(receiver.received.length, 2, 'a skipped delivery was sent without replaySkipped');
  });

  test('resume with replaySkipped sends the skipped deliveries: same IDs, oldest first, attempts kept', async (t) => {
    const receiver = await startReceiver(t, (_r, i, res) => {
      res.statusCode = i === 0 ? 500 : 200;
      res.end();
    });
    const { session } = await makeSignedInTenant(h);
    const w = await hook(session, receiver.url());
    const e1 = await publishEvent(h, session, { type: 'order.created', data: { n: 1 } });
    await deliveryOf(session, w.id, e1.body.id, retrying, 'the first attempt failing');
    await pause(h, session, w.id);
    const e2 = await publishEvent(h, session, { type: 'order.created', data: { n: 2 } });
    const e3 = await publishEvent(h, session, { type: 'order.created', data: { n: 3 } });
    const skipped = await logOf(h, session, w.id);
    assert.deepEqual(
      skipped.map((d) => d.status),
      ['skipped', 'skipped', 'skipped'],
      'the deliveries of the paused connection are not all skipped',
    );

    const resumed = await resume(h, session, w.id, { replaySkipped: true });
    assert.equal(
      resumed.replayed,
      3,
      'resume with replaySkipped does not count the three skipped deliveries',
    );
    assert.equal(resumed.connection.deliveryEnabled, true, 'the resumed connection does not deliver');
    await receiver.waitFor(4);
    assert.deepEqual(
      receiver.received.slice(1).map((r) => r.headers['webhook-id']),
      [e1.body.id, e2.body.id, e3.body.id],
      'the replayed deliveries were not sent oldest first',
    );
    const log = await waitForDeliveries(h, session, w.id, { settled: 3 });
    assert.deepEqual(
      log.map((d) => d.id).sort(),
      skipped.map((d) => d.id).sort(),
      'the replayed deliveries are not the skipped ones (new IDs?)',
    );
    const byEvent = (id: string) => log.find((d) => d.eventId === id)!;
    assert.deepEqual(
      byEvent(e1.body.id).attempts.map((a) => [a.number, a.responseStatus]),
      [
        [1, 500],
        [2, 200],
      ],
      'the replayed delivery lost its earlier attempt, or numbered the new one wrongly',
    );
    assert.equal(byEvent(e1.body.id).attemptCount, 2, 'the replayed delivery does not count both attempts');
    for (const e of [e2, e3]) {
      assert.equal(byEvent(e.body.id).status, 'delivered', 'a replayed delivery is not delivered');
      assert.equal(
        byEvent(e.body.id).attemptCount,
        1,
        'a replayed, never-attempted delivery counts attempts',
      );
    }
    const bodies = receiver.received.slice(1).map((r) => JSON.parse(r.body).data.n as number);
    assert.deepEqual(bodies, [1, 2, 3], 'the replayed deliveries do not carry their own events');
  });

  test('without workers: pending deliveries become skipped (no next attempt), matching events only; a replay makes them pending again', async (t) => {
    const idle = await startHarness({ env: ENV });
    t.after(() => idle.close());
    const { session } = await makeSignedInTenant(idle);
    const w = await makeWebhookConnection(idle, session, 'https://hooks.example.com/idle');
    const employees = await makeWebhookConnection(idle, session, 'https://hooks.example.com/emp', {
      eventTypes: ['employee.*'],
    });
    for (let i = 0; i < 2; i++) await publishEvent(idle, session, { type: 'order.created' });
    const pending = await logOf(idle, session, w.id);
    assert.deepEqual(
      pending.map((d) => d.status),
      ['pending', 'pending'],
      'deliveries without workers are not pending',
    );
    await pause(idle, session, w.id);
    await pause(idle, session, employees.id);
    assert.deepEqual(
      (await logOf(idle, session, w.id)).map((d) => [d.id, d.status, d.nextAttemptAt]),
      pending.map((d) => [d.id, 'skipped', null]),
      'pausing did not turn the pending deliveries into skipped ones without a next attempt',
    );
    const meanwhile = await publishEvent(idle, session, { type: 'order.created' });
    assert.equal(
      meanwhile.body.deliveries,
      1,
      'a paused connection whose eventTypes match is not counted, or one that does not match is',
    );
    assert.deepEqual(
      await logOf(idle, session, employees.id),
      [],
      'an event that does not match a paused connection is recorded for it',
    );

    const resumed = await resume(idle, session, w.id, { replaySkipped: true });
    assert.equal(resumed.replayed, 3, 'the replay does not count the three skipped deliveries');
    const after = await logOf(idle, session, w.id);
    assert.deepEqual(
      after.map((d) => d.status),
      ['pending', 'pending', 'pending'],
      'replayed deliveries are not pending again',
    );
    assert.ok(
      after.every((d) => d.nextAttemptAt !== null),
      'a replayed pending delivery does not say when it will go',
    );
    assert.deepEqual(
      after.slice(1).map((d) => d.id),
      pending.map((d) => d.id),
      'the replayed deliveries have new IDs',
    );
  });
});

describe('access', () => {
  const calls = (id: string): Array<[string, string, unknown]> => [
    ['PATCH', `${CONNECTIONS}/${id}`, { displayName: 'taken over' }],
    ['POST', `${CONNECTIONS}/${id}/pause`, undefined],
    ['POST', `${CONNECTIONS}/${id}/resume`, { replaySkipped: true }],
  ];

  test("another tenant's connection, an unknown and a malformed ID are 404 with a session or a key; nothing changes", async () => {
    const mine = await makeSignedInTenant(h);
    const theirs = await makeSignedInTenant(h);
    const target = await hook(theirs.session, 'https://hooks.example.com/theirs');
    const pausedTarget = await hook(theirs.session, 'https://hooks.example.com/theirs-paused');
    await pause(h, theirs.session, pausedTarget.id);
    const key = await makeKey(h, mine.session, { scopes: ['integrations:ADMIN'] });
    const ids = [
      target.id,
      pausedTarget.id,
      'con_0000000000000000000000',
      'not-an-id',
      'dlv_0000000000000000000000',
    ];
    for (const id of ids) {
      for (const [method, path, body] of calls(id)) {
        for (const credential of [{ session: mine.session }, { token: key.secret }]) {
          const r = await h.request(method, path, { ...credential, body });
          const who = 'token' in credential ? 'a key' : 'a session';
          assert.equal(r.status, 404, `${method} ${path} with ${who}: ${r.status} ${r.text}`);
          assert.equal(r.body.code, 'not_found', `${method} ${path} with ${who}: code ${r.body.code}`);
        }
      }
    }
    const active = await readConnection(h, theirs.session, target.id);
    assert.equal(active.status, 'active', "another tenant's calls paused the connection");
    assert.equal(active.displayName, 'hook', "another tenant's calls renamed the connection");
    const paused = await readConnection(h, theirs.session, pausedTarget.id);
    assert.equal(paused.status, 'paused', "another tenant's calls resumed the connection");
    const audit = (await auditOf(h, theirs.session, target.id)).map((e) => e.action);
    assert.ok(
      !audit.some((a) => /pause|resume|update|edit/.test(a)),
      `another tenant's calls were audited on the connection: ${audit.join(', ')}`,
    );
  });

  test('keys: READER is 403 insufficient_scope; OPERATOR may edit, pause and resume, and capabilities list the routes', async () => {
    const { session } = await makeSignedInTenant(h);
    const w = await hook(session, 'https://hooks.example.com/k');
    const reader = await makeKey(h, session, { scopes: ['integrations:READER'] });
    const hubOnly = await makeKey(h, session, { scopes: ['integration_hub:ADMIN'] });
    for (const key of [reader, hubOnly]) {
      for (const [method, path, body] of calls(w.id)) {
        const r = await h.request(method, path, { token: key.secret, body });
        assert.equal(r.status, 403, `${method} ${path} with ${key.scopes[0]}: ${r.status} ${r.text}`);
        assert.equal(
          r.body.code,
          'insufficient_scope',
          `${method} ${path} with ${key.scopes[0]} is refused with ${r.body.code}`,
        );
        assert.match(
          r.body.detail ?? '',
          /integrations:OPERATOR/,
          'the refusal does not name the scope needed',
        );
      }
    }
    assert.equal((await readConnection(h, session, w.id)).status, 'active', 'a refused key paused it');

    const operator = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
    const token = { token: operator.secret };
    const edited = await patchConnection(h, token, w.id, { displayName: 'by key' });
    assert.equal(edited.status, 200, `an OPERATOR key cannot PATCH: ${edited.text}`);
    assert.equal(edited.body.displayName, 'by key', 'the PATCH by key did not rename the connection');
    const paused = await operate<Connection>(h, token, w.id, 'pause');
    assert.equal(paused.status, 200, `an OPERATOR key cannot pause: ${paused.text}`);
    const resumed = await operate(h, token, w.id, 'resume', {});
    assert.equal(resumed.status, 200, `an OPERATOR key cannot resume: ${resumed.text}`);
    const audit = await auditOf(h, session, w.id);
    const byKey = audit.filter((e) => e.actorId === operator.id);
    assert.ok(byKey.length >= 3, `the key's three changes left ${byKey.length} audit entries naming the key`);

    const capabilities = await h.request('GET', '/api/v1/automation/capabilities', token);
    const listed = new Set(
      capabilities.body.routes.map((x: { method: string; path: string }) => `${x.method} ${x.path}`),
    );
    for (const route of [
      'PATCH /api/v1/integrations/connections/:id',
      'POST /api/v1/integrations/connections/:id/pause',
      'POST /api/v1/integrations/connections/:id/resume',
    ]) {
      assert.ok(listed.has(route), `capabilities of an OPERATOR key do not list ${route}`);
    }
  });

  test('sessions: a MEMBER is 403 role_forbidden; without the CSRF token 403 csrf_failed; nothing changes', async () => {
    const admin = await makeSignedInTenant(h);
    const w = await hook(admin.session, 'https://hooks.example.com/m');
    const member = await makeUser(h, admin.tenant.id, { role: 'MEMBER' });
    const memberSession = await signIn(h, member);
    for (const [method, path, body] of calls(w.id)) {
      const r = await h.request(method, path, { session: memberSession, body });
      assert.equal(r.status, 403, `${method} ${path} as a MEMBER: ${r.status}`);
      assert.equal(r.body.code, 'role_forbidden', `${method} ${path} as a MEMBER: ${r.body.code}`);
      const noCsrf = await h.request(method, path, { headers: { cookie: admin.session.cookie }, body });
      assert.equal(noCsrf.status, 403, `${method} ${path} without CSRF: ${noCsrf.status}`);
      assert.equal(noCsrf.body.code, 'csrf_failed', `${method} ${path} without CSRF: ${noCsrf.body.code}`);
    }
    const read = await readConnection(h, admin.session, w.id);
    assert.equal(read.status, 'active', 'a refused call paused the connection');
    assert.equal(read.displayName, 'hook', 'a refused call renamed the connection');
  });
});

test('no secret ever appears in a log line, nor in an answer other than the one that generated it', () => {
  assert.ok(shownOnce.length > 0 && neverShown.length > 0, 'the file collected no secret to look for');
  assertNoLeak(h, neverShown, shownOnce);
});
