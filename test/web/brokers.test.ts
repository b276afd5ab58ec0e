import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import {
  assertNoSeriousViolations,
  browserSkipReason,
  eventually,
  launchBrowser,
  newPage,
  screenshot,
  signInThroughUi,
  startUiHarness,
  type TestPage,
  type UiHarness,
} from '../helpers/browser.js';
import { publishEvent } from '../helpers/events.js';
import { makeKey, makeTenant, makeUser, signIn } from '../helpers/factories.js';
import { mosquittoSkipReason, startSubscriber } from '../helpers/mosquitto.js';
import { natsSkipReason, startStream } from '../helpers/nats.js';
import { rabbitSkipReason, startConsumer } from '../helpers/rabbitmq.js';
import { redisSkipReason, streamReader } from '../helpers/redis.js';

// Issue 40 (contract §21): a tenant picks RabbitMQ, NATS, Redis or MQTT on the New connection page,
// binds credentials in the dialog (the signing secret generated and shown once), and sees each
// message's attempt in the event log and on the delivery page as a webhook's: Delivered, the request
// as a PUBLISH to the broker URL and where on it, and the broker's answer in words. Each broker is the
// machine's own, with a queue, stream, key or topic of the test's own; a broker that is not running
// skips its test unless HUBGATE_REQUIRE_BROKERS=1.
const skipBrowser = browserSkipReason();

// The brokers listen on 127.0.0.1, a plaintext scheme: both are opened for this hub.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_TIMEOUT_MS: '5000',
};
/** Generous: two loaded cores run this next to other suites. */
const WAIT = 30_000;

const [rabbitSkip, natsSkip, redisSkip, mqttSkip] = await Promise.all([
  rabbitSkipReason(),
  natsSkipReason(),
  redisSkipReason(),
  mosquittoSkipReason(),
]);

/** What a consumer got, as the signature check needs it. */
interface Got {
  body: string;
  header: (name: string) => string;
}

describe('broker connections in the UI', () => {
  let h: UiHarness;
  let browser: Browser;
  let tp: TestPage;
  let page: Page;
  let publishToken = '';
  let apiSession: Awaited<ReturnType<typeof signIn>>;

  before(async () => {
    if (skipBrowser) return;
    h = await startUiHarness({ env: ENV, workers: { pollMs: 100 } });
    browser = await launchBrowser();
    const tenant = await makeTenant(h, {
      name: 'Acme Ltd',
      entitlements: ['integrations', 'integration_hub'],
    });
    const admin = await makeUser(h, tenant.id, { role: 'COMPANY_IT_ADMIN' });
    const api = await signIn(h, admin);
    apiSession = api;
    publishToken = (await makeKey(h, api, { scopes: ['integrations:OPERATOR'], name: 'publisher' })).secret;
    tp = await newPage(browser);
    page = tp.page;
    page.setDefaultTimeout(WAIT);
    await tp.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.uiUrl });
    await signInThroughUi(page, h.uiUrl, admin, '/connections');
  });
  after(async () => {
    await tp?.close();
    await browser?.close();
    await h?.close();
  });

  const row = (text: string) => page.getByRole('row').filter({ hasText: text });

  /** The text of `locator` as read, its spaces and line breaks as single spaces. */
  const textOf = async (locator: ReturnType<Page['locator']>) =>
    (await locator.innerText()).replace(/\s+/g, ' ').trim();

  /**
   * The words of `locator` but its lists of choices: the event log's filter by HTTP status class ("4xx
   * refused by the receiver") is about HTTP answers, whichever the connection.
   */
  const wordsBesideChoices = (locator: ReturnType<Page['locator']>) =>
    locator.evaluate((element) => {
      const copy = element.cloneNode(true) as typeof element;
      for (const select of copy.querySelectorAll('select')) select.remove();
      return (copy.textContent ?? '').replace(/\s+/g, ' ');
    });

  /**
   * Creates a connection on the New connection page as a person does: picks `connector` by name, fills
   * the display name and each of `fields` (by its label; a choice is chosen by its value), creates it and
   * binds credentials in the dialog that opens, keeping the generated signing secret. The dialogs must say
   * the secret signs each message and the consumer verifies `webhook-signature` where the message carries
   * it (`carrier`), never a receiver. Returns the secret, as copied from the page.
   */
  async function createThroughUi(
    connector: string,
    name: string,
    fields: Array<[label: RegExp, value: string]>,
    carrier: string,
    look?: string,
  ): Promise<string> {
    await page.goto(`${h.uiUrl}/connections/new`);
    await page.getByRole('heading', { level: 1, name: 'Create a connection' }).waitFor();
    await page.getByRole('radio', { name: connector, exact: true }).check();
    await page.getByLabel('Display name').fill(name);
    for (const [label, value] of fields) {
      const control = page.getByLabel(label);
      if ((await control.evaluate((e) => e.tagName)) === 'SELECT') await control.selectOption(value);
      else await control.fill(value);
    }
    if (look) {
      await assertNoSeriousViolations(page, `create ${look} connection`);
      await screenshot(page, `${look}-create`);
    }
    await page.getByRole('button', { name: 'Create connection' }).click();

    const dialog = page.getByRole('dialog', { name: `Bind credentials to “${name}”` });
    await dialog.waitFor();
    assert.equal(
      await dialog.getByRole('radio', { name: 'Generate a signing secret for me' }).isChecked(),
      true,
      `${connector}: generating the signing secret is not the default`,
    );
    // The broker's login is the tenant's to give; the machine's brokers take anyone.
    await dialog.getByLabel(/^Password/).waitFor();
    assert.equal(
      await dialog.getByLabel(/^Password/).getAttribute('type'),
      'password',
      `${connector}: the broker password is shown in clear as it is typed`,
    );
    const intro = await textOf(dialog.locator('.dialog-intro'));
    assert.match(
      intro,
      /^hubgate signs every message with the signing secret, so its consumer can tell it came from hubgate\./,
      `${connector}: the credentials dialog does not say the secret signs each message for its consumer`,
    );
    assert.doesNotMatch(await textOf(dialog), /receiver/i, `${connector}: the dialog speaks of a receiver`);
    await dialog.getByRole('button', { name: 'Bind credentials' }).click();

    const shown = page.getByRole('dialog', { name: `Signing secret of “${name}”` });
    const field = shown.getByRole('textbox', { name: 'Signing secret' });
    await field.waitFor();
    const secret = await field.inputValue();
    assert.match(
      secret,
      /^whsec_[A-Za-z0-9+/]+=*$/,
      `${connector}: the generated secret is not a whsec_ one`,
    );
    await shown.getByText('This is the only time it is shown.').waitFor();
    assert.equal(
      await textOf(shown.locator('.credentials-secret p').last()),
      `hubgate signs each message with it. Give it to the consumer: it verifies the webhook-signature ${carrier} of each message with it (Standard Webhooks).`,
      `${connector}: the secret's note does not say the consumer verifies each message's ${carrier}`,
    );
    assert.doesNotMatch(
      await textOf(shown),
      /receiver/i,
      `${connector}: the secret's note speaks of a receiver`,
    );
    await shown.getByRole('button', { name: 'Copy' }).click();
    await shown.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(
      String(await page.evaluate('navigator.clipboard.readText()')),
      secret,
      `${connector}: the clipboard does not hold the secret shown`,
    );
    await shown.getByRole('button', { name: 'Done' }).click();
    await shown.waitFor({ state: 'hidden' });

    const created = row(name);
    await created.getByText('Active').waitFor();
    await created.getByText('Delivery enabled').waitFor();
    await created.getByText(connector, { exact: true }).waitFor();
    return secret;
  }

  /**
   * Publishes one event of `type` (only the connection under test takes it), checks the consumer got
   * it signed with `secret`, and opens the connection's event log and the delivery's page, which must
   * show the attempt delivered, its request as a PUBLISH to `url`, and the broker's `answer`.
   */
  async function publishAndSee(
    name: string,
    type: string,
    secret: string,
    consumed: () => Promise<Got>,
    expected: { url: string; answer: RegExp },
    look?: string,
  ): Promise<void> {
    const published = await publishEvent(h, { token: publishToken }, { type, data: { id: 7 } });
    const event = published.body;
    assert.equal(event.deliveries, 1, `${type}: one delivery, to ${name} only`);

    const got = await consumed();
    const verified = new Webhook(secret).verify(got.body, {
      'webhook-id': got.header('webhook-id'),
      'webhook-timestamp': got.header('webhook-timestamp'),
      'webhook-signature': got.header('webhook-signature'),
    });
    assert.deepEqual(
      verified,
      { id: event.id, type, timestamp: event.createdAt, data: { id: 7 } },
      `${name}: the message does not verify with the secret copied from the page, or its body differs`,
    );

    await page.goto(`${h.uiUrl}/connections`);
    await row(name)
      .getByRole('link', { name: `Events of ${name}` })
      .click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
    const delivery = page
      .getByRole('row')
      .filter({ has: page.getByRole('button', { name: `Show attempts of ${event.id}`, exact: true }) });
    await eventually(async () => {
      if (!(await delivery.getByText('Delivered').isVisible())) {
        await page.getByRole('button', { name: /^Refresh/ }).click();
        assert.fail(`${name}: the delivery of ${event.id} is not shown as delivered`);
      }
    });
    await delivery.getByRole('button', { name: `Show attempts of ${event.id}` }).click();
    const attempts = page.getByRole('table', { name: `Attempts of ${event.id}` });
    await attempts.getByText('Delivered', { exact: true }).waitFor();

    await delivery.getByRole('link', { name: /^Details of evt_/ }).click();
    await page.getByRole('heading', { level: 1, name: type }).waitFor();
    await page.getByRole('region', { name: 'Delivery' }).getByText('Delivered').first().waitFor();
    const attempt = page.locator('details.attempt-card').first();
    await attempt.locator('summary').getByText('Delivered', { exact: true }).waitFor();
    const request = page.getByRole('region', { name: 'Request of attempt 1' });
    assert.equal(
      (await request.locator('.exchange-line').innerText()).replace(/\s+/g, ' ').trim(),
      `PUBLISH ${expected.url}`,
      `${name}: the request is not shown as a PUBLISH to the broker URL and target`,
    );
    const response = page.getByRole('region', { name: 'Response of attempt 1' });
    const answer = await response.getByRole('region', { name: 'Response body of attempt 1' }).innerText();
    assert.match(answer.trim(), expected.answer, `${name}: the broker's answer is not shown in words`);
    // A broker answers no HTTP status: none is shown, and no "receiver not reached" either.
    assert.equal(await response.getByText('No answer').count(), 0, `${name}: the answer is said missing`);
    if (look) {
      await assertNoSeriousViolations(page, `${look} delivery page`);
      await screenshot(page, `${look}-delivery`);
    }
    const errors = tp.errors.filter((e) => !/^request failed: .*net::ERR_ABORTED$/.test(e));
    assert.deepEqual(errors, [], `${name}: the page reported errors`);
  }

  test(
    'RabbitMQ: created from the catalog, a confirmed publish in the event log',
    {
      skip: skipBrowser ?? rabbitSkip,
      timeout: 120_000,
    },
    async (t) => {
      const consumer = await startConsumer(t, 'amqp.order.paid');
      const name = 'Orders queue';
      const secret = await createThroughUi(
        'RabbitMQ (AMQP)',
        name,
        [
          [/^Broker URL$/, 'amqp://127.0.0.1:5672/'],
          [/^Exchange/, consumer.exchange],
          [/^Routing key$/, '{type}'],
          [/^Event types/, 'amqp.*'],
        ],
        'AMQP header',
        'broker-amqp',
      );
      await publishAndSee(
        name,
        'amqp.order.paid',
        secret,
        async () => {
          const [message] = await consumer.waitFor(1);
          assert.ok(message, 'the consumer got no message');
          const headers = message.properties.headers ?? {};
          return { body: message.content.toString('utf8'), header: (n) => String(headers[n]) };
        },
        {
          url: `amqp://127.0.0.1:5672/ exchange=${consumer.exchange} routingKey=amqp.order.paid`,
          answer: /^confirmed$/,
        },
        'broker-amqp',
      );
    },
  );

  test(
    'NATS: created from the catalog, a stream acknowledgement in the event log',
    {
      skip: skipBrowser ?? natsSkip,
      timeout: 120_000,
    },
    async (t) => {
      const stream = await startStream(t);
      const name = 'Orders subject';
      const secret = await createThroughUi(
        'NATS JetStream',
        name,
        [
          [/^Broker URL$/, 'nats://127.0.0.1:4222'],
          [/^Subject$/, `${stream.prefix}.{type}`],
          [/^Event types/, 'nats.*'],
        ],
        'NATS header',
      );
      await publishAndSee(
        name,
        'nats.order.paid',
        secret,
        async () => {
          const [message] = await stream.waitFor(1);
          assert.ok(message, 'the consumer got no message');
          assert.equal(message.subject, `${stream.prefix}.nats.order.paid`, 'published on another subject');
          return { body: message.string(), header: (n) => message.headers?.get(n) ?? '' };
        },
        {
          url: `nats://127.0.0.1:4222 subject=${stream.prefix}.nats.order.paid`,
          answer: new RegExp(`^stream ${stream.stream} seq 1$`),
        },
      );
    },
  );

  test(
    'Redis: created from the catalog, the entry ID in the event log',
    {
      skip: skipBrowser ?? redisSkip,
      timeout: 120_000,
    },
    async (t) => {
      const reader = await streamReader(t);
      const name = 'Orders stream';
      const secret = await createThroughUi(
        'Redis Streams',
        name,
        [
          [/^Broker URL$/, 'redis://127.0.0.1:6379'],
          [/^Stream$/, reader.stream],
          [/^Event types/, 'redis.*'],
        ],
        'Redis stream field',
      );
      let entryId = '';
      await publishAndSee(
        name,
        'redis.order.paid',
        secret,
        async () => {
          const [entry] = await reader.waitFor(1);
          assert.ok(entry, 'the stream has no entry');
          entryId = entry.id;
          return { body: entry.field('body') ?? '', header: (n) => entry.field(n) ?? '' };
        },
        {
          url: `redis://127.0.0.1:6379/0 stream=${reader.stream}`,
          answer: /^\d+-\d+$/,
        },
      );
      const answer = await page.getByRole('region', { name: 'Response body of attempt 1' }).innerText();
      assert.equal(answer.trim(), entryId, 'the answer shown is not the ID of the entry Redis made');

      // Editing names the broker's fields as the create page does.
      await page.getByRole('link', { name }).click();
      await page.getByRole('heading', { level: 1, name }).waitFor();
      await page.getByRole('button', { name: 'Edit', exact: true }).click();
      const edit = page.getByRole('dialog', { name: `Edit “${name}”` });
      assert.equal(
        await edit.getByLabel(/^Broker URL$/).inputValue(),
        'redis://127.0.0.1:6379',
        'the edit dialog does not show the broker URL as "Broker URL"',
      );
      // Its hint is the broker URL's (the schemes, no login in it) and what a new host does: no https.
      const describedBy = await edit.getByLabel(/^Broker URL$/).getAttribute('aria-describedby');
      assert.ok(describedBy, 'the broker URL has no hint');
      const hint = await textOf(edit.locator(`[id="${describedBy.split(' ')[0]}"]`));
      assert.match(
        hint,
        /rediss:\/\/host\[:port\]\[\/db\] \(redis:\/\/ only where the hub allows plaintext\); no user or password: bind them as credentials\./,
        'the edit dialog does not hint the broker URL by its schemes, without a login',
      );
      assert.match(hint, /go to the broker when hubgate connects, so a new host unbinds them/, hint);
      assert.doesNotMatch(await textOf(edit), /receiver|https/i, 'the edit dialog hints a receiver or https');
      await edit.getByLabel('Stream length (optional)').waitFor();
      await page.keyboard.press('Escape');
      await edit.waitFor({ state: 'hidden' });
    },
  );

  test(
    'MQTT: created from the catalog with QoS 2, PUBCOMP in the event log',
    {
      skip: skipBrowser ?? mqttSkip,
      timeout: 120_000,
    },
    async (t) => {
      const subscriber = await startSubscriber(t);
      const name = 'Orders topic';
      // The QoS is a choice of 1 (the default) or 2, each said with what it means.
      await page.goto(`${h.uiUrl}/connections/new`);
      await page.getByRole('radio', { name: 'MQTT 5', exact: true }).check();
      const qos = page.getByRole('combobox', { name: /^Quality of service \(QoS\)/ });
      await qos.waitFor();
      assert.deepEqual(
        (await qos.locator('option').allInnerTexts()).map((text) => text.trim()),
        ['1: at least once (PUBACK)', '2: exactly once (PUBCOMP)'],
        'the QoS is not a choice of 1 or 2',
      );
      assert.equal(await qos.inputValue(), '1', 'the QoS does not start at its default, 1');

      const secret = await createThroughUi(
        'MQTT 5',
        name,
        [
          [/^Broker URL$/, 'mqtt://127.0.0.1:1883'],
          [/^Topic$/, `${subscriber.prefix}/{type}`],
          [/^Quality of service/, '2'],
          [/^Event types/, 'mqtt.*'],
        ],
        'MQTT 5 user property',
      );
      // Chosen in the form, stored as the API's number.
      const list = await h.request('GET', '/api/v1/integrations/connections?limit=100', {
        session: apiSession,
      });
      assert.equal(list.status, 200, list.text);
      const created = (
        list.body.data as Array<{ displayName: string; config: Record<string, unknown> }>
      ).find((c) => c.displayName === name);
      assert.strictEqual(created?.config.qos, 2, 'the connection was not created with qos 2, a number');
      await publishAndSee(
        name,
        'mqtt.order.paid',
        secret,
        async () => {
          const [message] = await subscriber.waitFor(1);
          assert.ok(message, 'the consumer got no message');
          assert.equal(message.topic, `${subscriber.prefix}/mqtt.order.paid`, 'published to another topic');
          return { body: message.body, header: (n) => message.userProperties[n] ?? '' };
        },
        {
          url: `mqtt://127.0.0.1:1883 topic=${subscriber.prefix}/mqtt.order.paid qos=2`,
          answer: /^PUBCOMP success$/,
        },
      );
    },
  );
  test(
    'a broker not reached: the attempt, the delivery page and the paused connection say so, not a receiver',
    { skip: skipBrowser, timeout: 120_000 },
    async () => {
      // Nothing listens on port 1: each connect is refused at once (ECONNREFUSED), a connection_error.
      const name = 'Stream down';
      const made = await h.request('POST', '/api/v1/integrations/connections', {
        session: apiSession,
        body: {
          connectorKey: 'redis',
          displayName: name,
          url: 'redis://127.0.0.1:1',
          stream: 'orders',
          eventTypes: ['down.*'],
        },
      });
      assert.equal(made.status, 201, made.text);
      const id = String(made.body.id);
      const bound = await h.request('PUT', `/api/v1/integrations/connections/${id}/credentials`, {
        session: apiSession,
        body: {},
      });
      assert.equal(bound.status, 200, bound.text);
      const event = (await publishEvent(h, { token: publishToken }, { type: 'down.order.paid' })).body;

      await page.goto(`${h.uiUrl}/connections/${id}/events`);
      await page.getByRole('heading', { level: 1, name }).waitFor();
      const delivery = page
        .getByRole('row')
        .filter({ has: page.getByRole('button', { name: `Show attempts of ${event.id}`, exact: true }) });
      await eventually(async () => {
        if (!(await delivery.getByText('Retrying').isVisible())) {
          await page.getByRole('button', { name: /^Refresh/ }).click();
          assert.fail(`the delivery of ${event.id} is not shown as retrying`);
        }
      });
      await delivery.getByRole('button', { name: `Show attempts of ${event.id}` }).click();
      const attempts = page.getByRole('table', { name: `Attempts of ${event.id}` });
      await attempts.getByText('The broker was not reached, or did not acknowledge the message').waitFor();
      assert.match(
        await textOf(page.locator('main')),
        /with what was sent and what the broker answered\./,
        'the event log does not say it shows what the broker answered',
      );
      assert.doesNotMatch(
        await wordsBesideChoices(page.locator('main')),
        /receiver/i,
        'the event log speaks of a receiver',
      );

      await delivery.getByRole('link', { name: /^Details of evt_/ }).click();
      await page.getByRole('heading', { level: 1, name: 'down.order.paid' }).waitFor();
      const attempt = page.locator('details.attempt-card').first();
      await attempt
        .locator('summary')
        .getByText('The broker was not reached, or did not acknowledge the message')
        .waitFor();
      await page
        .getByRole('region', { name: 'Response of attempt 1' })
        .getByText('No acknowledgement: the broker was not reached, or did not acknowledge the message.')
        .waitFor();
      assert.doesNotMatch(
        await wordsBesideChoices(page.locator('main')),
        /receiver/i,
        'the delivery page speaks of a receiver',
      );

      // Paused, the connection's banner and summary speak of the broker.
      const paused = await h.request('POST', `/api/v1/integrations/connections/${id}/pause`, {
        session: apiSession,
      });
      assert.equal(paused.status, 200, paused.text);
      await page.goto(`${h.uiUrl}/connections/${id}/events`);
      await page.getByRole('heading', { level: 2, name: 'Deliveries are paused' }).waitFor();
      await page.getByText('Resume it when the broker is ready again.').waitFor();
      const summary = page.getByRole('region', { name: 'Connection' });
      assert.equal(
        await textOf(summary.locator('dt', { hasText: 'URL' })),
        'Broker URL',
        'the connection summary does not call its URL the broker URL',
      );
      assert.doesNotMatch(
        await wordsBesideChoices(page.locator('main')),
        /receiver/i,
        'the paused page speaks of a receiver',
      );
      const errors = tp.errors.filter((e) => !/^request failed: .*net::ERR_ABORTED$/.test(e));
      assert.deepEqual(errors, [], 'the pages reported errors');
    },
  );
});
