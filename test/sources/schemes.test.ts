import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sign as octokitSign, verify as octokitVerify } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import {
  githubSignature,
  hmacSignature,
  shopifySignature,
  slackSignature,
  standardSignature,
  stripeSignature,
  unix,
} from './signers.js';

// Each scheme of contract §22, signed as its provider signs (test/sources/signers.ts), sent over
// HTTP to the real app with workers on: what verifies is published and reaches a real receiver;
// what does not (altered, forged, stale, unsigned) is refused with 401 and publishes nothing.

const ENV = { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' };
const SOURCES = '/api/v1/integrations/sources';
const CONNECTIONS = '/api/v1/integrations/connections';

let h: Harness;
before(async () => {
  h = await startHarness({ env: ENV, workers: { pollMs: 50 } });
});
after(() => h.close());

describe('the test signers agree with the providers’ own SDKs', () => {
  const body = JSON.stringify({ id: 'evt_1', type: 'invoice.paid', data: { object: { amount: 100 } } });

  test('Stripe: the header is what generateTestHeaderString makes, and constructEvent accepts it', () => {
    const stripe = new Stripe('sk_test_not_a_key');
    const at = new Date();
    const secret = 'whsec_test_secret_value';
    const ours = stripeSignature(secret, body, at);
    assert.equal(
      ours,
      stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: unix(at) }),
      'our Stripe signer differs from Stripe’s own',
    );
    assert.deepEqual(
      stripe.webhooks.constructEvent(body, ours, secret),
      JSON.parse(body),
      'Stripe’s constructEvent refuses our signature',
    );
    assert.throws(
      () => stripe.webhooks.constructEvent(body, ours, 'whsec_other'),
      'Stripe accepts a wrong secret',
    );
  });

  test('GitHub: the header is what @octokit/webhooks-methods signs, and its verify accepts it', async () => {
    const ours = githubSignature('gh secret', body);
    assert.equal(ours, await octokitSign('gh secret', body), 'our GitHub signer differs from Octokit’s');
    assert.equal(await octokitVerify('gh secret', body, ours), true, 'Octokit refuses our signature');
    assert.equal(await octokitVerify('another', body, ours), false, 'Octokit accepts a wrong secret');
  });

  test('Standard Webhooks: the signature is what the standardwebhooks library signs and verifies', () => {
    const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
    const webhook = new Webhook(secret);
    const at = new Date();
    const ours = standardSignature(secret, 'msg_1', unix(at), body);
    assert.equal(ours, webhook.sign('msg_1', at, body), 'our signer differs from the library’s');
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(unix(at)),
      'webhook-signature': ours,
    };
    assert.deepEqual(webhook.verify(body, headers), JSON.parse(body), 'the library refuses our signature');
  });

  test('Slack: the worked example of Slack’s documentation', () => {
    // api.slack.com/authentication/verifying-requests-from-slack, "walkthrough".
    const example =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    assert.equal(
      slackSignature('8f742231b10e8888abcd99yyyzzz85a5', 1531420618, example),
      'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
      'our Slack signer does not reproduce Slack’s documented example',
    );
  });
});

/** A provider's delivery: the exact body and the headers it sends, signed with `secret` at `at`. */
interface Delivery {
  body: string;
  headers: Record<string, string>;
}

interface SchemeCase {
  label: string;
  scheme: string;
  create: Record<string, unknown>;
  /** The delivery with provider ID `id`, signed with `secret` at `at`. */
  deliver(secret: string, id: string, at: Date): Delivery;
  /** Where the signature is: removed for the "missing header" case. */
  signatureHeader: string;
  expectedType: string;
  /** A scheme that signs a timestamp refuses one older than 5 minutes. */
  timestamped: boolean;
}

const json = (value: unknown) => JSON.stringify(value);

const CASES: SchemeCase[] = [
  {
    label: 'stripe',
    scheme: 'stripe',
    create: { secret: 'whsec_stripe_endpoint_secret' },
    deliver(secret, id, at) {
      const body = json({ id, object: 'event', type: 'invoice.paid', data: { object: { amount: 4200 } } });
      return { body, headers: { 'stripe-signature': stripeSignature(secret, body, at) } };
    },
    signatureHeader: 'stripe-signature',
    expectedType: 'stripe.invoice.paid',
    timestamped: true,
  },
  {
    label: 'github',
    scheme: 'github',
    create: { secret: 'github webhook secret' },
    deliver(secret, id) {
      const body = json({ action: 'opened', number: 7, pull_request: { title: 'Fix' } });
      return {
        body,
        headers: {
          'x-github-event': 'pull_request',
          'x-github-delivery': id,
          'x-hub-signature-256': githubSignature(secret, body),
        },
      };
    },
    signatureHeader: 'x-hub-signature-256',
    expectedType: 'github.pull_request.opened',
    timestamped: false,
  },
  {
    label: 'slack',
    scheme: 'slack',
    create: { secret: '8f742231b10e8888abcd99yyyzzz85a5' },
    deliver(secret, id, at) {
      const body = json({
        type: 'event_callback',
        event_id: id,
        event: { type: 'app_mention', text: '<@U1> hello' },
      });
      return {
        body,
        headers: {
          'x-slack-request-timestamp': String(unix(at)),
          'x-slack-signature': slackSignature(secret, unix(at), body),
        },
      };
    },
    signatureHeader: 'x-slack-signature',
    expectedType: 'slack.app_mention',
    timestamped: true,
  },
  {
    label: 'shopify',
    scheme: 'shopify',
    create: { secret: 'shpss_client_secret' },
    deliver(secret, id) {
      const body = json({ id: 820982911946154, email: 'jon@example.com', total_price: '10.00' });
      return {
        body,
        headers: {
          // A topic with a slash: normalised to `_` in the event type.
          'x-shopify-topic': 'orders/create',
          'x-shopify-webhook-id': id,
          'x-shopify-hmac-sha256': shopifySignature(secret, body),
        },
      };
    },
    signatureHeader: 'x-shopify-hmac-sha256',
    expectedType: 'shopify.orders_create',
    timestamped: false,
  },
  {
    label: 'standard-webhooks (secret made by hubgate)',
    scheme: 'standard-webhooks',
    create: {},
    deliver(secret, id, at) {
      const body = json({ type: 'user.created', timestamp: at.toISOString(), data: { id: 'u_1' } });
      return {
        body,
        headers: {
          'webhook-id': id,
          'webhook-timestamp': String(unix(at)),
          'webhook-signature': standardSignature(secret, id, unix(at), body),
        },
      };
    },
    signatureHeader: 'webhook-signature',
    expectedType: 'standard-webhooks.user.created',
    timestamped: true,
  },
  {
    label: 'hmac (base64, prefix, type and ID in the body)',
    scheme: 'hmac',
    create: {
      secret: 'a shared hmac secret',
      typePrefix: 'acme',
      signatureHeader: 'X-Acme-Signature',
      encoding: 'base64',
      signaturePrefix: 'sha256=',
      typePath: 'meta.kind',
      idPath: 'meta.id',
    },
    deliver(secret, id) {
      const body = json({ meta: { kind: 'Order Paid!', id }, order: { n: 1 } });
      return { body, headers: { 'x-acme-signature': hmacSignature(secret, body, 'base64', 'sha256=') } };
    },
    signatureHeader: 'x-acme-signature',
    expectedType: 'acme.order_paid_',
    timestamped: false,
  },
  {
    label: 'hmac (hex, fixed event type, ID in a header)',
    scheme: 'hmac',
    create: {
      secret: 'another hmac secret',
      signatureHeader: 'X-Sig',
      encoding: 'hex',
      eventType: 'ping',
      idHeader: 'X-Delivery',
    },
    deliver(secret, id) {
      const body = json({ hello: 'world' });
      return { body, headers: { 'x-sig': hmacSignature(secret, body, 'hex'), 'x-delivery': id } };
    },
    signatureHeader: 'x-sig',
    expectedType: 'hmac.ping',
    timestamped: false,
  },
];

interface Source {
  id: string;
  secret: string;
}

async function makeSource(
  session: TestSession,
  create: Record<string, unknown>,
  scheme: string,
): Promise<Source> {
  const r = await h.request('POST', SOURCES, {
    session,
    body: { name: `${scheme} source`, scheme, ...create },
  });
  assert.equal(r.status, 201, `creating a ${scheme} source answered ${r.status}: ${r.text}`);
  const secret = (create.secret as string | undefined) ?? r.body.secret;
  assert.ok(secret, 'no secret to sign with');
  return { id: r.body.id, secret };
}

const send = (sourceId: string, delivery: Delivery) =>
  h.request('POST', `/ingest/${sourceId}`, {
    rawBody: delivery.body,
    headers: { 'content-type': 'application/json', ...delivery.headers },
  });

async function deliveriesOf(session: TestSession, connectionId: string): Promise<{ eventId: string }[]> {
  const r = await h.request('GET', `${CONNECTIONS}/${connectionId}/events?limit=100`, { session });
  assert.equal(r.status, 200, r.text);
  return r.body.data;
}

const deliveryId = () => `d-${randomUUID()}`;
const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);

for (const c of CASES) {
  describe(`scheme ${c.label}`, () => {
    test('an altered body, a wrong secret, a missing signature or a stale timestamp: 401, nothing published', async (t) => {
      const { session } = await makeSignedInTenant(h);
      const receiver = await startReceiver(t);
      const hook = await makeWebhookConnection(h, session, receiver.url());
      const source = await makeSource(session, c.create, c.scheme);
      const refused: Array<[string, Delivery]> = [];
      const good = c.deliver(source.secret, deliveryId(), new Date());
      refused.push(['an altered body', { ...good, body: good.body.replace('}', ',"extra":1}') }]);
      // The same bytes, the signature's value changed by one character: ten from the end, where
      // every bit is the digest's (base64's last character before `=` also holds padding bits,
      // which decoders ignore: changing those is no forgery).
      const value = good.headers[c.signatureHeader] ?? '';
      const flipped = value.slice(0, -10) + (value.at(-10) === 'a' ? 'b' : 'a') + value.slice(-9);
      refused.push([
        'a changed signature',
        { ...good, headers: { ...good.headers, [c.signatureHeader]: flipped } },
      ]);
      const wrongSecret =
        c.scheme === 'standard-webhooks'
          ? `whsec_${Buffer.alloc(32, 7).toString('base64')}`
          : 'not the secret';
      refused.push(['a wrong secret', c.deliver(wrongSecret, deliveryId(), new Date())]);
      const { [c.signatureHeader]: _gone, ...unsigned } = good.headers;
      refused.push(['no signature header', { ...good, headers: unsigned }]);
      refused.push([
        'an empty signature',
        { ...good, headers: { ...good.headers, [c.signatureHeader]: '' } },
      ]);
      if (c.timestamped) {
        refused.push(['a timestamp 6 minutes old', c.deliver(source.secret, deliveryId(), minutesAgo(6))]);
        refused.push(['a timestamp 6 minutes ahead', c.deliver(source.secret, deliveryId(), minutesAgo(-6))]);
      }
      for (const [what, delivery] of refused) {
        const r = await send(source.id, delivery);
        assert.equal(r.status, 401, `${what} answered ${r.status}: ${r.text}`);
        assert.equal(r.body.code, 'invalid_signature', `${what}: ${r.text}`);
        assert.ok(!r.text.includes(source.secret), 'the secret appeared in a refusal');
      }
      // A good one after them is published: the refusals did not consume its delivery ID, and the
      // connection has exactly that one event.
      const accepted = await send(source.id, good);
      assert.equal(accepted.status, 202, accepted.text);
      assert.deepEqual(
        (await deliveriesOf(session, hook.id)).map((d) => d.eventId),
        [accepted.body.id],
        'a refused request was published',
      );
    });

    test('a signed delivery: 202 {id}, its event reaches the receiver; the same delivery again is a duplicate', async (t) => {
      const { session } = await makeSignedInTenant(h);
      const receiver = await startReceiver(t);
      const hook = await makeWebhookConnection(h, session, receiver.url());
      const source = await makeSource(session, c.create, c.scheme);
      const id = deliveryId();
      const delivery = c.deliver(source.secret, id, new Date());
      const first = await send(source.id, delivery);
      assert.equal(first.status, 202, `a signed ${c.label} delivery answered ${first.status}: ${first.text}`);
      assert.match(first.body.id, /^evt_/, 'the answer is not an event ID');
      assert.deepEqual(Object.keys(first.body), ['id'], 'the 202 holds more than the ID');
      const [arrived] = await receiver.waitFor(1);
      const event = JSON.parse(arrived?.body ?? '{}');
      assert.equal(event.id, first.body.id, 'the receiver got another event');
      assert.equal(
        event.type,
        c.expectedType,
        'the event type is not the provider’s, prefixed and normalised',
      );
      assert.deepEqual(event.data, JSON.parse(delivery.body), 'the event’s data is not the provider’s body');

      // The provider retries the same delivery (re-signed, as a retry is): the first event's ID, nothing new.
      const again = await send(source.id, c.deliver(source.secret, id, new Date()));
      assert.equal(again.status, 200, `the same delivery again answered ${again.status}: ${again.text}`);
      assert.deepEqual(again.body, { id: first.body.id, duplicate: true }, 'a duplicate is not told as one');
      assert.equal((await deliveriesOf(session, hook.id)).length, 1, 'a duplicate was published again');

      // Another delivery ID is another event.
      const other = await send(source.id, c.deliver(source.secret, deliveryId(), new Date()));
      assert.equal(other.status, 202, other.text);
      assert.notEqual(other.body.id, first.body.id, 'another delivery ID became the same event');
    });
  });
}

describe('scheme details', () => {
  test('GitHub: `push` has no action, its type is github.push; X-GitHub-Event is lower-cased', async (t) => {
    const { session } = await makeSignedInTenant(h);
    const receiver = await startReceiver(t);
    await makeWebhookConnection(h, session, receiver.url());
    const source = await makeSource(session, { secret: 'gh' + 'x'.repeat(20) }, 'github');
    const body = json({ ref: 'refs/heads/main', commits: [] });
    const r = await send(source.id, {
      body,
      headers: {
        'x-github-event': 'Push',
        'x-github-delivery': deliveryId(),
        'x-hub-signature-256': githubSignature(source.secret, body),
      },
    });
    assert.equal(r.status, 202, r.text);
    const [arrived] = await receiver.waitFor(1);
    assert.equal(JSON.parse(arrived?.body ?? '{}').type, 'github.push', 'a push is not typed github.push');
  });

  test('GitHub: the old SHA-1 header alone is refused (only X-Hub-Signature-256 counts)', async () => {
    const { session } = await makeSignedInTenant(h);
    const source = await makeSource(session, { secret: 'gh secret value' }, 'github');
    const body = json({ zen: 'Keep it logically awesome.' });
    const { createHmac } = await import('node:crypto');
    const sha1 = `sha1=${createHmac('sha1', source.secret).update(body).digest('hex')}`;
    const r = await send(source.id, {
      body,
      headers: { 'x-github-event': 'ping', 'x-github-delivery': deliveryId(), 'x-hub-signature': sha1 },
    });
    assert.equal(r.status, 401, r.text);
  });

  test('Stripe: a v1 made with another secret is refused; beside a good one (rolled secrets), accepted', async () => {
    const { session } = await makeSignedInTenant(h);
    const source = await makeSource(session, { secret: 'whsec_the_real_one' }, 'stripe');
    const at = new Date();
    const body = json({ id: `evt_${randomUUID()}`, type: 'charge.succeeded', data: {} });
    const forged = stripeSignature('whsec_an_attackers_secret', body, at);
    const r = await send(source.id, { body, headers: { 'stripe-signature': forged } });
    assert.equal(r.status, 401, r.text);
    // A timestamp that is not the signed one, with a valid v1 for another timestamp.
    const real = stripeSignature(source.secret, body, at);
    const moved = real.replace(/^t=(\d+)/, (_m, t: string) => `t=${Number(t) - 1}`);
    assert.equal(
      (await send(source.id, { body, headers: { 'stripe-signature': moved } })).status,
      401,
      'a v1 verified against a timestamp it was not made for',
    );
    const v1 = real.split(',v1=')[1];
    const both = `${forged},v1=${v1}`;
    const ok = await send(source.id, { body, headers: { 'stripe-signature': both } });
    assert.equal(ok.status, 202, `any v1 may match (Stripe sends one per active secret): ${ok.text}`);
  });

  test('Stripe sends `application/json; charset=utf-8`: accepted, the bytes verified as sent', async () => {
    const { session } = await makeSignedInTenant(h);
    const source = await makeSource(session, { secret: 'whsec_charset_case' }, 'stripe');
    // Stripe's own formatting: indented, with a non-ASCII character, which a re-serialisation would change.
    const body = `{\n  "id": "evt_${randomUUID()}",\n  "type": "customer.created",\n  "data": { "name": "Zoë" }\n}`;
    const r = await h.request('POST', `/ingest/${source.id}`, {
      rawBody: body,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'stripe-signature': stripeSignature(source.secret, body, new Date()),
      },
    });
    assert.equal(r.status, 202, `a Stripe delivery with a charset answered ${r.status}: ${r.text}`);
  });

  test('a hostile provider type is normalised and cut to 100; a signed request with no type is 400, its ID not consumed', async (t) => {
    const { session } = await makeSignedInTenant(h);
    const receiver = await startReceiver(t);
    await makeWebhookConnection(h, session, receiver.url());
    const source = await makeSource(session, { secret: 'github hostile types' }, 'github');
    const signed = (event: string | undefined, id: string, payload: unknown) => {
      const body = json(payload);
      return {
        body,
        headers: {
          ...(event === undefined ? {} : { 'x-github-event': event }),
          'x-github-delivery': id,
          'x-hub-signature-256': githubSignature(source.secret, body),
        },
      };
    };
    const id = deliveryId();
    const untyped = await send(source.id, signed(undefined, id, { zen: 'x' }));
    assert.equal(untyped.status, 400, `a signed request without a type answered ${untyped.status}`);
    assert.equal(untyped.body.code, 'validation_failed', untyped.text);
    const hostile = await send(
      source.id,
      signed('Issue Comment/../<b>', id, { action: `Créé ${'x'.repeat(300)}` }),
    );
    assert.equal(hostile.status, 202, `the same ID with a type answered ${hostile.status}: ${hostile.text}`);
    const [arrived] = await receiver.waitFor(1);
    const type = JSON.parse(arrived?.body ?? '{}').type as string;
    // The contract's rule: lower-cased, every character outside [a-z0-9_.-] made `_`, cut to 100.
    const expected = `github.issue_comment_..__b_.cr___${'x'.repeat(100)}`.slice(0, 100);
    assert.equal(type, expected, 'the event type is not normalised and cut to 100 characters');
  });

  test('Slack: a signature for another timestamp than the header’s is refused', async () => {
    const { session } = await makeSignedInTenant(h);
    const source = await makeSource(session, { secret: 'slack signing secret' }, 'slack');
    const body = json({ type: 'event_callback', event_id: deliveryId(), event: { type: 'message' } });
    const ts = unix(new Date());
    const r = await send(source.id, {
      body,
      headers: {
        'x-slack-request-timestamp': String(ts),
        'x-slack-signature': slackSignature(source.secret, ts - 1, body),
      },
    });
    assert.equal(r.status, 401, r.text);
  });

  test('Slack url_verification: 200 {challenge}, nothing published', async () => {
    const { session } = await makeSignedInTenant(h);
    const receiver = await startReceiver();
    const hook = await makeWebhookConnection(h, session, receiver.url());
    await receiver.close();
    const source = await makeSource(session, { secret: 'slack signing secret' }, 'slack');
    const body = json({
      token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl',
      challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      type: 'url_verification',
    });
    const ts = unix(new Date());
    const r = await send(source.id, {
      body,
      headers: {
        'x-slack-request-timestamp': String(ts),
        'x-slack-signature': slackSignature(source.secret, ts, body),
      },
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      r.body,
      { challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' },
      'the challenge is not answered',
    );
    assert.equal((await deliveriesOf(session, hook.id)).length, 0, 'a url_verification was published');
    // Unsigned, the challenge is not echoed.
    const unsigned = await send(source.id, { body, headers: { 'x-slack-request-timestamp': String(ts) } });
    assert.equal(unsigned.status, 401, unsigned.text);
  });

  test('Standard Webhooks: one good signature among several (rotated keys) verifies; the ID is part of what is signed', async () => {
    const { session } = await makeSignedInTenant(h);
    const source = await makeSource(session, {}, 'standard-webhooks');
    const id = `msg_${randomUUID()}`;
    const at = new Date();
    const body = json({ type: 'invoice.created', data: {} });
    const good = standardSignature(source.secret, id, unix(at), body);
    const other = standardSignature(`whsec_${Buffer.alloc(24, 1).toString('base64')}`, id, unix(at), body);
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(unix(at)) };
    const swappedId = await send(source.id, {
      body,
      headers: { ...headers, 'webhook-id': `${id}x`, 'webhook-signature': good },
    });
    assert.equal(swappedId.status, 401, 'a signature for another message ID was accepted');
    const r = await send(source.id, {
      body,
      headers: { ...headers, 'webhook-signature': `${other} ${good}` },
    });
    assert.equal(r.status, 202, r.text);
  });
});

describe('rotating a source’s secret', () => {
  test('with an overlap both secrets verify until it ends, then only the new one', async (t) => {
    const { session } = await makeSignedInTenant(h);
    const source = await makeSource(session, { secret: 'the first stripe secret' }, 'stripe');
    const at = new Date();
    h.setNow(at);
    t.after(() => h.setNow(null));
    const rotated = await h.request('POST', `${SOURCES}/${source.id}/rotate-secret`, {
      session,
      body: { secret: 'the second stripe secret', previousValidForSeconds: 600 },
    });
    assert.equal(rotated.status, 200, rotated.text);
    assert.equal(rotated.body.secret, undefined, 'a given secret was shown back');
    assert.equal(
      rotated.body.previousSecretValidUntil,
      new Date(at.getTime() + 600_000).toISOString(),
      'the overlap’s end is not told',
    );
    const stripeDelivery = (secret: string, now: Date) => {
      const body = json({ id: `evt_${randomUUID()}`, type: 'charge.succeeded', data: {} });
      return { body, headers: { 'stripe-signature': stripeSignature(secret, body, now) } };
    };
    assert.equal(
      (await send(source.id, stripeDelivery('the first stripe secret', at))).status,
      202,
      'the old secret is refused during the overlap',
    );
    assert.equal(
      (await send(source.id, stripeDelivery('the second stripe secret', at))).status,
      202,
      'the new secret is refused during the overlap',
    );
    const later = new Date(at.getTime() + 601_000);
    h.setNow(later);
    const old = await send(source.id, stripeDelivery('the first stripe secret', later));
    assert.equal(old.status, 401, `the old secret still verifies after the overlap: ${old.text}`);
    assert.equal(
      (await send(source.id, stripeDelivery('the second stripe secret', later))).status,
      202,
      'the new secret is refused after the overlap',
    );
    const read = await h.request('GET', `${SOURCES}/${source.id}`, { session });
    assert.equal(read.body.previousSecretValidUntil, null, 'an ended overlap is still shown');
  });

  test('without previousValidForSeconds the old secret is refused at once', async () => {
    const { session } = await makeSignedInTenant(h);
    const source = await makeSource(session, { secret: 'first github secret' }, 'github');
    const delivery = (secret: string) => {
      const body = json({ zen: 'Design for failure.' });
      return {
        body,
        headers: {
          'x-github-event': 'ping',
          'x-github-delivery': deliveryId(),
          'x-hub-signature-256': githubSignature(secret, body),
        },
      };
    };
    assert.equal(
      (await send(source.id, delivery('first github secret'))).status,
      202,
      'the first secret is refused',
    );
    const rotated = await h.request('POST', `${SOURCES}/${source.id}/rotate-secret`, {
      session,
      body: { secret: 'second github secret' },
    });
    assert.equal(rotated.status, 200, rotated.text);
    assert.equal(rotated.body.previousSecretValidUntil, null, 'a rotation without overlap shows one');
    const old = await send(source.id, delivery('first github secret'));
    assert.equal(old.status, 401, `the old secret verifies after a rotation without overlap: ${old.text}`);
    assert.equal(
      (await send(source.id, delivery('second github secret'))).status,
      202,
      'the new secret is refused',
    );
  });

  test('standard-webhooks: a rotation without a secret makes one, shown once, that verifies', async () => {
    const { session } = await makeSignedInTenant(h);
    const source = await makeSource(session, {}, 'standard-webhooks');
    const rotated = await h.request('POST', `${SOURCES}/${source.id}/rotate-secret`, { session, body: {} });
    assert.equal(rotated.status, 200, rotated.text);
    const secret = rotated.body.secret as string;
    assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/, 'the made secret is not whsec_ and base64');
    assert.notEqual(secret, source.secret, 'the rotation kept the secret');
    const id = `msg_${randomUUID()}`;
    const ts = unix(new Date());
    const body = json({ type: 'a.b', data: {} });
    const sent = (key: string) =>
      send(source.id, {
        body,
        headers: {
          'webhook-id': id,
          'webhook-timestamp': String(ts),
          'webhook-signature': standardSignature(key, id, ts, body),
        },
      });
    assert.equal((await sent(source.secret)).status, 401, 'the rotated-out secret verifies');
    assert.equal((await sent(secret)).status, 202, 'the made secret does not verify');
  });
});
