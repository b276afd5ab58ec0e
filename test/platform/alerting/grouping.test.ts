import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { randomBase62 } from '../../../src/crypto/base62.js';
import { alertEvaluations } from '../../helpers/alert-engine.js';
import { publishEvent } from '../../helpers/events.js';
import { makeSignedInTenant, makeWebhookConnection } from '../../helpers/factories.js';
import { startHarness, type Harness } from '../../helpers/harness.js';
import { startReceiver, type Received } from '../../helpers/receiver.js';
import { startSmtp } from '../../helpers/smtp.js';
import { waitUntil } from '../../helpers/wait.js';

// Operator notifications seen from the tenant's side (docs/api/limits.md): what a tenant writes reaches an
// operator only as quoted single-line data, and one tenant's many failing connections make one
// notice per channel, not one per connection.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_RETRY_SCHEDULE: '0',
  DELIVERY_TIMEOUT_MS: '2000',
  ALERT_EVALUATION_INTERVAL_MS: '100',
  ALERT_RETRY_SCHEDULE: '0,0',
};
const CHANNELS = '/api/v1/platform/alerting/channels';
const RULES = '/api/v1/platform/alerting/rules';

let h: Harness;
// Every tenant delivery fails at once: 410 Gone is final (docs/api/events.md).
let gone: Awaited<ReturnType<typeof startReceiver>>;
before(async () => {
  h = await startHarness({ env: ENV, workers: { pollMs: 50 } });
  gone = await startReceiver((_r, _i, res) => {
    res.statusCode = 410;
    res.end();
  });
});
after(async () => {
  await gone.close();
  await h.close();
});

type AlertBody = {
  status: string;
  groupKey: string;
  groupLabels: Record<string, string>;
  truncatedAlerts: number;
  alerts: Array<{ status: string; labels: Record<string, string>; annotations: Record<string, string> }>;
};

const verified = (secret: string, received: Received): AlertBody =>
  new Webhook(secret).verify(received.body, {
    'webhook-id': String(received.headers['webhook-id']),
    'webhook-timestamp': String(received.headers['webhook-timestamp']),
    'webhook-signature': String(received.headers['webhook-signature']),
  }) as AlertBody;

async function channel(name: string, kind: string, config: Record<string, unknown>) {
  const created = await h.request('POST', CHANNELS, { token: h.platformToken, body: { name, kind, config } });
  assert.equal(created.status, 201, created.text);
  return { id: created.body.id as string, secret: created.body.signingSecret as string | undefined };
}

/** DeliveryFailed of this tenant (only) goes to these channels from now on. */
async function routeTenantTo(tenantId: string, channelIds: string[]) {
  const r = await h.request('PUT', RULES, {
    token: h.platformToken,
    body: {
      defaults: { channelIds: [], repeatIntervalSeconds: 3600 },
      rules: [
        {
          name: 'this tenant',
          matchers: [
            { name: 'alertname', op: '=', value: 'DeliveryFailed' },
            { name: 'tenantId', op: '=', value: tenantId },
          ],
          channelIds,
        },
      ],
    },
  });
  assert.equal(r.status, 200, r.text);
}

const failedDeliveries = async (tenantId: string): Promise<number> => {
  const { rows } = await sql<{ n: string | number }>`
    select count(*) as n from deliveries where tenant_id = ${tenantId} and status = 'failed'`.execute(
    h.database.kysely,
  );
  return Number(rows[0]?.n ?? 0);
};

const waitForFailed = (tenantId: string, count: number) =>
  waitUntil(async () => (await failedDeliveries(tenantId)) >= count, {
    message: `${count} failed deliveries`,
    timeoutMs: 20_000,
  });

test('30 failing connections of one tenant make one notice listing 30 alerts, then one resolved', async (t) => {
  const { tenant, session } = await makeSignedInTenant(h);
  const pager = await startReceiver(t);
  const hook = await channel('grouped', 'WEBHOOK', { url: pager.url('/alerts') });
  const ids = new Set<string>();
  for (let i = 0; i < 30; i++) {
    ids.add((await makeWebhookConnection(h, session, gone.url(), { displayName: `shop ${i}` })).id);
  }
  await publishEvent(h, session);
  await waitForFailed(tenant.id, 30);
  // Routed only once all 30 fire, so the first evaluation that may send sees all of them.
  await routeTenantTo(tenant.id, [hook.id]);
  const [first] = await pager.waitFor(1);
  const firing = verified(hook.secret!, first!);
  assert.equal(firing.status, 'firing', 'the grouped notice is not a firing one');
  assert.equal(firing.alerts.length, 30, 'the grouped notice does not list all 30 alerts');
  assert.equal(firing.truncatedAlerts, 0, 'the grouped notice says alerts were left out');
  assert.deepEqual(
    new Set(firing.alerts.map((a) => a.labels.connectionId)),
    ids,
    'the grouped notice lists other connections than the 30 failing ones',
  );
  assert.deepEqual(
    firing.groupLabels,
    { alertname: 'DeliveryFailed', tenantId: tenant.id },
    'the grouped notice is not grouped by alert name and tenant',
  );
  assert.equal(
    firing.groupKey,
    `{}:{alertname="DeliveryFailed", tenantId="${tenant.id}"}`,
    "the grouped notice's group key is not the Alertmanager form",
  );

  // Every delivery to them succeeds at once: the whole group resolves, in one notice.
  await sql`update deliveries set status = 'delivered', delivered_at = now(), updated_at = now()
    where tenant_id = ${tenant.id}`.execute(h.database.kysely);
  const [, second] = await pager.waitFor(2);
  const resolved = verified(hook.secret!, second!);
  assert.equal(resolved.status, 'resolved', "the group's second notice is not a resolved one");
  assert.equal(resolved.groupKey, firing.groupKey, 'the resolved notice names another group');
  assert.equal(resolved.alerts.length, 30, 'the resolved notice does not list all 30 alerts');
  assert.ok(
    resolved.alerts.every((a) => a.status === 'resolved'),
    'an alert in the resolved notice is not resolved',
  );
  assert.deepEqual(
    new Set(resolved.alerts.map((a) => a.labels.connectionId)),
    ids,
    'the resolved notice lists other connections than the 30',
  );
  await alertEvaluations(h.database, 3);
  assert.equal(pager.received.length, 2, 'nothing more');
});

test('a new failing connection of a tenant already notified sends the group again, listing both', async (t) => {
  const { tenant, session } = await makeSignedInTenant(h);
  const pager = await startReceiver(t);
  const hook = await channel('grouped again', 'WEBHOOK', { url: pager.url('/alerts') });
  await routeTenantTo(tenant.id, [hook.id]);
  const first = await makeWebhookConnection(h, session, gone.url(), { displayName: 'first' });
  await publishEvent(h, session);
  await pager.waitFor(1);
  const second = await makeWebhookConnection(h, session, gone.url(), { displayName: 'second' });
  await publishEvent(h, session);
  const [, again] = await pager.waitFor(2);
  const body = verified(hook.secret!, again!);
  assert.equal(body.status, 'firing', "the group's second notice is not a firing one");
  assert.deepEqual(
    body.alerts.map((a) => a.labels.connectionId).sort(),
    [first.id, second.id].sort(),
    'the group sent again does not list both failing connections',
  );
  await alertEvaluations(h.database, 3);
  assert.equal(pager.received.length, 2, 'not again within repeatIntervalSeconds');
});

test('failures arriving over several evaluations are one notice, once an evaluation finds no more', async (t) => {
  // Its own app, evaluating every 500 ms; the test writes each failed delivery itself, a third
  // of them per evaluation (no event is published: no worker touches them).
  const slow = await startHarness({
    env: { ...ENV, ALERT_EVALUATION_INTERVAL_MS: '500' },
    workers: { pollMs: 50 },
  });
  t.after(() => slow.close());
  const pager = await startReceiver(t);
  const { tenant, session } = await makeSignedInTenant(slow);
  const created = await slow.request('POST', CHANNELS, {
    token: slow.platformToken,
    body: { name: 'burst', kind: 'HTTP', config: { url: pager.url('/alerts') } },
  });
  assert.equal(created.status, 201, created.text);
  const rules = await slow.request('PUT', RULES, {
    token: slow.platformToken,
    body: { defaults: { channelIds: [created.body.id], repeatIntervalSeconds: 3600 }, rules: [] },
  });
  assert.equal(rules.status, 200, rules.text);
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) {
    ids.push((await makeWebhookConnection(slow, session, gone.url(), { displayName: `shop ${i}` })).id);
  }
  const eventId = `evt_${randomBase62(22)}`;
  const at = new Date();
  await slow.database.kysely
    .insertInto('events')
    .values({
      id: eventId,
      tenant_id: tenant.id,
      type: 'order.created',
      payload_sealed: 'never read',
      delivery_count: ids.length,
      created_at: at,
    })
    .execute();
  const fail = (connectionIds: string[]) =>
    slow.database.kysely
      .insertInto('deliveries')
      .values(
        connectionIds.map((connectionId) => ({
          id: `dlv_${randomBase62(22)}`,
          tenant_id: tenant.id,
          event_id: eventId,
          connection_id: connectionId,
          status: 'failed' as const,
          attempt_count: 1,
          next_attempt_at: null,
          lease_until: null,
          leased_by: null,
          created_at: at,
          updated_at: new Date(),
          delivered_at: null,
        })),
      )
      .execute();

  const db = slow.database.kysely;
  const firing = async () =>
    Number(
      (
        await sql<{ n: string | number }>`select count(*) as n from alerts
          where status = 'firing' and labels->>'tenantId' = ${tenant.id}`.execute(db)
      ).rows[0]?.n ?? 0,
    );
  for (let third = 0; third < 3; third++) {
    await fail(ids.slice(third * 10, third * 10 + 10));
    // The next third fails as soon as an evaluation has seen this one.
    await waitUntil(async () => (await firing()) >= third * 10 + 10, {
      message: `the engine seeing ${third * 10 + 10} alerts`,
      timeoutMs: 10_000,
      intervalMs: 20,
    });
  }
  const [first] = await pager.waitFor(1);
  await alertEvaluations(h.database, 3);
  assert.equal(pager.received.length, 1, 'one notice for the burst');
  const body = JSON.parse(first!.body) as AlertBody;
  assert.equal(
    body.alerts.length,
    30,
    'a burst over several evaluations was not one notice of all 30 alerts',
  );
});

/** A raw message's headers (unfolded) and its text, quoted-printable decoded when it is. */
function readMail(raw: string) {
  const split = raw.indexOf('\r\n\r\n');
  const headers = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  let body = raw.slice(split + 4);
  if (/^Content-Transfer-Encoding: quoted-printable$/im.test(headers)) {
    const text = body.replace(/=\r\n/g, '');
    const bytes: number[] = [];
    for (let i = 0; i < text.length; i++) {
      const hex = text.slice(i + 1, i + 3);
      if (text[i] === '=' && /^[0-9A-F]{2}$/.test(hex)) {
        bytes.push(Number.parseInt(hex, 16));
        i += 2;
      } else bytes.push(text.charCodeAt(i));
    }
    body = Buffer.from(bytes).toString('utf8');
  }
  return { headers, lines: body.replace(/\r\n/g, '\n').split('\n') };
}

const HOSTILE =
  'shop\nACTION REQUIRED: rotate keys at https://evil.example\r\n\u2028\u2029\u0085\u202e' +
  '<https://evil.example|click> *bold* _it_ <!channel> @channel <b>bold</b> & "quoted" \\ `code`';
// JSON-string style, with the markup characters escaped too (as Go's encoding/json writes them).
const QUOTED =
  '"shop\\nACTION REQUIRED: rotate keys at https://evil.example\\r\\n\\u2028\\u2029\\u0085\\u202e' +
  '\\u003chttps://evil.example|click\\u003e *bold* _it_ \\u003c!channel\\u003e @channel ' +
  '\\u003cb\\u003ebold\\u003c/b\\u003e \\u0026 \\"quoted\\" \\\\ `code`"';
const SUMMARY = `Deliveries to connection ${QUOTED} failed for good`;

test('a display name with line breaks and markup reaches email, Slack and webhook quoted on one line', async (t) => {
  const { tenant, session } = await makeSignedInTenant(h);
  const pager = await startReceiver(t);
  const slack = await startReceiver(t);
  const smtp = await startSmtp({ disabledCommands: ['STARTTLS', 'AUTH'] });
  t.after(() => smtp.close());
  const hook = await channel('hostile hook', 'WEBHOOK', { url: pager.url('/alerts') });
  const chat = await channel('hostile slack', 'SLACK', { webhookUrl: slack.url('/services/T0/B0/X') });
  const mail = await channel('hostile mail', 'EMAIL', {
    to: ['oncall@example.test'],
    from: 'alerts@hub.example.test',
    smtpHost: '127.0.0.1',
    smtpPort: smtp.port,
  });
  await routeTenantTo(tenant.id, [hook.id, chat.id, mail.id]);
  await makeWebhookConnection(h, session, gone.url(), { displayName: HOSTILE });
  await publishEvent(h, session);
  await pager.waitFor(1);
  await slack.waitFor(1);
  await waitUntil(() => smtp.mails.length >= 1, { message: 'the alert e-mail' });

  const webhook = verified(hook.secret!, pager.received[0]!);
  assert.equal(
    webhook.alerts[0]!.annotations.summary,
    SUMMARY,
    "the webhook notice's summary does not quote the display name on one line",
  );

  const message = JSON.parse(slack.received[0]!.body) as {
    text: string;
    blocks: Array<{ type: string; text: { type: string; text: string } }>;
  };
  const raw = slack.received[0]!.body;
  const texts = [message.text, ...message.blocks.map((block) => block.text.text)].join('\u0000');
  for (const markup of ['<https', '<!channel', '<b>', '\u2028', '\u2029', '\u0085', '\u202e', '\nACTION']) {
    assert.ok(!texts.includes(markup), `${JSON.stringify(markup)} in ${raw}`);
  }
  assert.ok(!message.text.includes('evil'), 'the notification line carries no tenant text');
  const details = message.blocks.filter((block) => block.text.text.includes('evil.example'));
  assert.ok(details.length > 0, raw);
  for (const block of details) {
    // Slack parses no markup (links, mentions, *bold*) in plain_text.
    assert.equal(block.text.type, 'plain_text', raw);
    const line = block.text.text.split('\n').find((l) => l.includes('evil.example'));
    assert.equal(
      line,
      `Summary: ${SUMMARY}`,
      "the Slack notice's summary line does not quote the display name",
    );
  }

  const { headers, lines } = readMail(smtp.mails[0]!.raw);
  assert.match(
    headers,
    new RegExp(`^Subject: \\[FIRING\\] DeliveryFailed \\(tenant ${tenant.id}\\)$`, 'm'),
    'the e-mail subject does not name the alert and the tenant alone on one line',
  );
  assert.ok(!/^Content-Type: text\/html/im.test(smtp.mails[0]!.raw), 'no HTML part');
  assert.ok(lines.includes(`    summary = ${SUMMARY}`), lines.join('\n'));
  assert.ok(!lines.some((line) => /^\s*ACTION REQUIRED/.test(line)), 'no line of the tenant’s own');
});
