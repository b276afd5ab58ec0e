import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { assertNoLeak, makeKey, makeSignedInTenant } from '../../helpers/factories.js';
import { startHarness, type Harness } from '../../helpers/harness.js';
import { startReceiver } from '../../helpers/receiver.js';

const CHANNELS = '/api/v1/platform/alerting/channels';
const RULES = '/api/v1/platform/alerting/rules';

let h: Harness;
before(async () => {
  h = await startHarness({
    env: { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32', DELIVERY_TIMEOUT_MS: '1000' },
  });
});
after(() => h.close());

const create = (body: unknown) => h.request('POST', CHANNELS, { token: h.platformToken, body });
const count = async (table: 'alert_channels' | 'audit_log') =>
  Number(
    (
      await h.database.kysely
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('creating channels', () => {
  test('each kind is created with its secret fields named, never shown', async () => {
    const secrets = {
      smtpPassword: 'smtp-pass-0f9c2e',
      url: 'https://alerts.example.com/hook/p4th-s3cret',
      webhookUrl: 'https://hooks.slack.example/services/T000/B000/xoxsecret',
      serviceAccountToken: 'glsa_token_5ecret',
      headerValue: 'Bearer header-5ecret',
    };
    const bodies = [
      {
        kind: 'EMAIL',
        config: {
          to: ['ops@example.com'],
          from: 'hubgate@example.com',
          smtpHost: 'smtp.example.com',
          smtpPort: 587,
          smtpPassword: secrets.smtpPassword,
        },
        shown: {
          to: ['ops@example.com'],
          from: 'hubgate@example.com',
          smtpHost: 'smtp.example.com',
          smtpPort: 587,
        },
        secretFields: ['smtpPassword'],
      },
      { kind: 'WEBHOOK', config: { url: secrets.url }, shown: {}, secretFields: ['signingSecret', 'url'] },
      { kind: 'SLACK', config: { webhookUrl: secrets.webhookUrl }, shown: {}, secretFields: ['webhookUrl'] },
      {
        kind: 'GRAFANA',
        config: {
          baseUrl: 'https://grafana.example.com',
          tags: ['hubgate'],
          serviceAccountToken: secrets.serviceAccountToken,
        },
        shown: { baseUrl: 'https://grafana.example.com', tags: ['hubgate'] },
        secretFields: ['serviceAccountToken'],
      },
      {
        kind: 'HTTP',
        config: { url: secrets.url, method: 'PUT', headers: { authorization: secrets.headerValue } },
        shown: { method: 'PUT' },
        secretFields: ['headers', 'url'],
      },
    ];
    for (const { kind, config, shown, secretFields } of bodies) {
      const created = await create({ name: `${kind} channel`, kind, config });
      assert.equal(created.status, 201, created.text);
      assert.equal(
        created.headers.get('cache-control'),
        'no-store',
        `${kind}: the answer that may carry a signing secret may be cached`,
      );
      assert.match(created.body.id, /^chn_[0-9A-Za-z]{22}$/, `${kind}: the channel ID is not a chn_ ID`);
      assert.equal(created.body.kind, kind, `${kind}: the channel was created as another kind`);
      assert.equal(created.body.enabled, true, `${kind}: a new channel is not enabled`);
      assert.deepEqual(
        created.body.config,
        shown,
        `${kind}: the channel shows a secret field, or hides a plain one`,
      );
      assert.deepEqual(
        created.body.secretFields,
        secretFields,
        `${kind}: the channel does not name exactly its secret fields`,
      );
      const read = await h.request('GET', `${CHANNELS}/${created.body.id}`, { token: h.platformToken });
      assert.equal(read.status, 200, `${kind}: the new channel cannot be read`);
      assert.deepEqual(
        { ...read.body },
        Object.fromEntries(Object.entries(created.body).filter(([k]) => k !== 'signingSecret')),
        `${kind}: reading the channel shows something other than its create answer without the secret`,
      );
    }
    const list = await h.request('GET', `${CHANNELS}?limit=100`, { token: h.platformToken });
    assert.equal(list.status, 200, 'the channel list cannot be read');
    assert.ok(list.body.data.length >= 5, 'the channel list does not hold the five channels created');
    assertNoLeak(h, Object.values(secrets));
  });

  test('a WEBHOOK channel’s generated signing secret is returned by the create call only', async () => {
    const created = await create({
      name: 'hook',
      kind: 'WEBHOOK',
      config: { url: 'https://a.example.com/x' },
    });
    assert.equal(created.status, 201, 'a WEBHOOK channel cannot be created');
    assert.match(
      created.body.signingSecret,
      /^whsec_[A-Za-z0-9+/]+=*$/,
      "the WEBHOOK channel's generated signing secret is not a whsec_ secret",
    );
    const read = await h.request('GET', `${CHANNELS}/${created.body.id}`, { token: h.platformToken });
    assert.equal(
      read.body.signingSecret,
      undefined,
      'reading the WEBHOOK channel shows its signing secret again',
    );
    assertNoLeak(h, [], [created.body.signingSecret]);
  });

  test('bad bodies get the documented 400s and nothing is written', async () => {
    const channels = await count('alert_channels');
    const audits = await count('audit_log');
    const cases: Array<[unknown, string, string]> = [
      [{ name: 'x', kind: 'PAGER', config: {} }, 'validation_failed', 'kind'],
      [{ name: 'x', kind: 'SLACK', config: {} }, 'validation_failed', 'config.webhookUrl'],
      [
        { name: 'x', kind: 'SLACK', config: { webhookUrl: 'https://h.example.com', extra: 1 } },
        'validation_failed',
        'config.extra',
      ],
      [
        {
          name: 'x',
          kind: 'EMAIL',
          config: { to: ['not-an-email'], from: 'a@example.com', smtpHost: 'smtp.example.com', smtpPort: 25 },
        },
        'validation_failed',
        'config.to.0',
      ],
      [
        {
          name: 'x',
          kind: 'EMAIL',
          config: {
            to: ['a@example.com'],
            from: 'a@example.com',
            smtpHost: 'smtp.example.com',
            smtpPort: 70000,
          },
        },
        'validation_failed',
        'config.smtpPort',
      ],
      [
        { name: 'x', kind: 'WEBHOOK', config: { url: 'https://a.example.com', signingSecret: 'whsec_abc' } },
        'validation_failed',
        'config.signingSecret',
      ],
      [{ name: 'x', kind: 'WEBHOOK', config: { url: 'not a url' } }, 'validation_failed', 'config.url'],
      [
        { name: 'x', kind: 'WEBHOOK', config: { url: 'https://127.0.0.2/hook' } },
        'destination_forbidden',
        'config.url',
      ],
      [
        { name: 'x', kind: 'SLACK', config: { webhookUrl: 'https://[::1]/hook' } },
        'destination_forbidden',
        'config.webhookUrl',
      ],
      [
        { name: 'x', kind: 'HTTP', config: { url: 'https://metadata.google.internal/x', method: 'POST' } },
        'destination_forbidden',
        'config.url',
      ],
      [
        {
          name: 'x',
          kind: 'GRAFANA',
          config: { baseUrl: 'https://169.254.169.254', tags: [], serviceAccountToken: 't' },
        },
        'destination_forbidden',
        'config.baseUrl',
      ],
      [
        {
          name: 'x',
          kind: 'EMAIL',
          config: { to: ['a@example.com'], from: 'a@example.com', smtpHost: 'localhost', smtpPort: 25 },
        },
        'destination_forbidden',
        'config.smtpHost',
      ],
      [
        {
          name: 'x',
          kind: 'EMAIL',
          config: { to: ['a@example.com'], from: 'a@example.com', smtpHost: '10.0.0.5', smtpPort: 25 },
        },
        'destination_forbidden',
        'config.smtpHost',
      ],
      [
        {
          name: 'x',
          kind: 'HTTP',
          config: { url: 'https://a.example.com', headers: { 'x-a': 'one\r\nx-b: two' } },
        },
        'validation_failed',
        'config.headers.x-a',
      ],
      [
        { name: 'x', kind: 'HTTP', config: { url: 'https://a.example.com', headers: { 'bad name': 'v' } } },
        'validation_failed',
        'config.headers.bad name',
      ],
      [
        { name: 'x', kind: 'HTTP', config: { url: 'https://a.example.com', headers: { 'x-a': 5 } } },
        'validation_failed',
        'config.headers.x-a',
      ],
      [
        {
          name: 'x',
          kind: 'GRAFANA',
          config: { baseUrl: 'https://g.example.com', tags: [], serviceAccountToken: 'tok\r\nX-Evil: 1' },
        },
        'validation_failed',
        'config.serviceAccountToken',
      ],
      // Single-line but unsendable: the HTTP client refuses anything beyond Latin-1 in a header.
      [
        { name: 'x', kind: 'HTTP', config: { url: 'https://a.example.com', headers: { 'x-a': 'price €5' } } },
        'validation_failed',
        'config.headers.x-a',
      ],
      [
        {
          name: 'x',
          kind: 'GRAFANA',
          config: { baseUrl: 'https://g.example.com', tags: [], serviceAccountToken: 'glsa_\u2028x' },
        },
        'validation_failed',
        'config.serviceAccountToken',
      ],
      [
        { name: 'x', kind: 'HTTP', config: { url: 'https://a.example.com', method: 'DELETE' } },
        'validation_failed',
        'config.method',
      ],
    ];
    for (const [body, code, path] of cases) {
      const r = await create(body);
      assert.equal(r.status, 400, `${JSON.stringify(body)} → ${r.text}`);
      assert.equal(r.body.code, code, r.text);
      assert.ok(
        r.body.errors.some((e: { path: string }) => e.path === path),
        `${JSON.stringify(body)}: expected an error at ${path}, got ${r.text}`,
      );
    }
    assert.equal(await count('alert_channels'), channels, 'a refused channel was stored');
    assert.equal(await count('audit_log'), audits, 'a refused channel was audited');
  });

  test('only a platform key may manage channels', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session, { scopes: ['integrations:ADMIN'] });
    const body = { name: 'x', kind: 'SLACK', config: { webhookUrl: 'https://h.example.com/x' } };
    assert.equal(
      (await h.request('POST', CHANNELS, { body })).status,
      401,
      'a channel can be created with no credential',
    );
    const byKey = await h.request('POST', CHANNELS, { token: key.secret, body });
    assert.equal(byKey.status, 403, 'a tenant API key is not refused on the channels');
    assert.equal(
      byKey.body.code,
      'platform_key_required',
      'a tenant API key is refused for another reason than needing a platform key',
    );
    const bySession = await h.request('GET', CHANNELS, { session });
    assert.equal(bySession.status, 403, 'a tenant session is not refused on the channels');
    assert.equal(
      bySession.body.code,
      'platform_key_required',
      'a tenant session is refused for another reason than needing a platform key',
    );
  });
});

describe('changing, testing and deleting channels', () => {
  test('PATCH changes what it names: secrets stay set, null removes an optional field, kind is fixed', async () => {
    const created = await create({
      name: 'mail',
      kind: 'EMAIL',
      config: {
        to: ['a@example.com'],
        from: 'b@example.com',
        smtpHost: 'smtp.example.com',
        smtpPort: 587,
        smtpPassword: 'pw-1234567',
      },
    });
    const id = created.body.id;
    const renamed = await h.request('PATCH', `${CHANNELS}/${id}`, {
      token: h.platformToken,
      body: { name: 'mail 2', enabled: false, config: { smtpPort: 2525 } },
    });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.name, 'mail 2', 'PATCH did not rename the channel');
    assert.equal(renamed.body.enabled, false, 'PATCH did not disable the channel');
    assert.equal(renamed.body.config.smtpPort, 2525, 'PATCH did not change the SMTP port');
    assert.deepEqual(renamed.body.config.to, ['a@example.com'], 'PATCH lost the recipients it did not name');
    assert.deepEqual(
      renamed.body.secretFields,
      ['smtpPassword'],
      'PATCH lost the SMTP password it did not name',
    );
    assert.ok(renamed.body.updatedAt >= created.body.updatedAt, 'PATCH moved updatedAt back in time');
    assert.equal(renamed.body.createdAt, created.body.createdAt, 'PATCH changed createdAt');

    const unset = await h.request('PATCH', `${CHANNELS}/${id}`, {
      token: h.platformToken,
      body: { config: { smtpPassword: null } },
    });
    assert.equal(unset.status, 200, unset.text);
    assert.deepEqual(unset.body.secretFields, [], 'null did not remove the SMTP password');

    const required = await h.request('PATCH', `${CHANNELS}/${id}`, {
      token: h.platformToken,
      body: { config: { smtpHost: null } },
    });
    assert.equal(required.status, 400, 'null removed a required field');
    assert.equal(
      required.body.errors[0].path,
      'config.smtpHost',
      'removing the SMTP host is not refused on that field',
    );

    const kind = await h.request('PATCH', `${CHANNELS}/${id}`, {
      token: h.platformToken,
      body: { kind: 'SLACK' },
    });
    assert.equal(kind.status, 400, "PATCH changed the channel's kind");
    assert.equal(kind.body.errors[0].path, 'kind', 'the refusal to change the kind does not name the field');

    const forbidden = await h.request('PATCH', `${CHANNELS}/${id}`, {
      token: h.platformToken,
      body: { config: { smtpHost: '192.168.1.1' } },
    });
    assert.equal(forbidden.status, 400, 'a private SMTP host is accepted');
    assert.equal(
      forbidden.body.code,
      'destination_forbidden',
      'a private SMTP host is refused for another reason than the destination policy',
    );
    const after = await h.request('GET', `${CHANNELS}/${id}`, { token: h.platformToken });
    assert.equal(after.body.config.smtpHost, 'smtp.example.com', 'a refused SMTP host was stored');

    const missing = await h.request('PATCH', `${CHANNELS}/chn_nope`, {
      token: h.platformToken,
      body: { name: 'x' },
    });
    assert.equal(missing.status, 404, 'PATCH of an unknown channel does not answer 404');
  });

  test('POST …/test sends a signed notification with the channel’s current secrets and reports the answer', async (t) => {
    let answer = 200;
    const receiver = await startReceiver(t, (_r, _i, res) => {
      res.statusCode = answer;
      res.end();
    });
    const created = await create({
      name: 'hook',
      kind: 'WEBHOOK',
      config: { url: receiver.url('/first') },
    });
    const id = created.body.id;
    assert.equal(created.body.lastAttempt, null, 'no attempt yet');
    // Changing only the name keeps the URL and the signing secret.
    await h.request('PATCH', `${CHANNELS}/${id}`, {
      token: h.platformToken,
      body: { name: 'renamed hook' },
    });
    const ok = await h.request('POST', `${CHANNELS}/${id}/test`, { token: h.platformToken });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(
      ok.body,
      { ok: true, responseStatus: 200, error: null },
      "a test to a healthy channel does not report success with the receiver's 200",
    );
    const [arrived] = await receiver.waitFor(1);
    assert.equal(arrived!.url, '/first', "the test notice went to another path than the channel's URL");
    const verified = new Webhook(created.body.signingSecret).verify(arrived!.body, {
      'webhook-id': String(arrived!.headers['webhook-id']),
      'webhook-timestamp': String(arrived!.headers['webhook-timestamp']),
      'webhook-signature': String(arrived!.headers['webhook-signature']),
    }) as { receiver: string; alerts: Array<{ labels: Record<string, string> }> };
    assert.equal(
      verified.receiver,
      'renamed hook',
      'the test notice does not name the renamed channel as receiver',
    );
    assert.equal(
      verified.alerts[0]!.labels.alertname,
      'HubgateTestNotification',
      'the test notice is not HubgateTestNotification',
    );

    answer = 503;
    const failing = await h.request('POST', `${CHANNELS}/${id}/test`, { token: h.platformToken });
    assert.equal(failing.status, 200, 'a failing test is not answered 200 with its outcome');
    assert.equal(failing.body.ok, false, 'a test answered 503 reports success');
    assert.equal(failing.body.responseStatus, 503, "a failing test does not report the receiver's 503");
    assert.equal(typeof failing.body.error, 'string', 'a failing test does not say what went wrong');
    // The channel remembers its last attempt, for the console, the secret URL nowhere in it.
    const read = await h.request('GET', `${CHANNELS}/${id}`, { token: h.platformToken });
    assert.equal(
      read.body.lastAttempt.ok,
      false,
      "the channel's last attempt shows success after a failed test",
    );
    assert.equal(
      read.body.lastAttempt.responseStatus,
      503,
      "the channel's last attempt lost the receiver's 503",
    );
    assert.equal(
      read.body.lastAttempt.error,
      failing.body.error,
      "the channel's last attempt gives another error than the test answer",
    );
    assert.equal(read.body.lastAttempt.test, true, "the channel's last attempt is not marked as a test");
    assert.ok(
      !Number.isNaN(Date.parse(read.body.lastAttempt.at)),
      "the channel's last attempt has no valid time",
    );
    assert.ok(!read.text.includes(receiver.url('/first')), 'no secret URL');

    const moved = await h.request('PATCH', `${CHANNELS}/${id}`, {
      token: h.platformToken,
      body: { config: { url: receiver.url('/second') } },
    });
    assert.equal(moved.status, 200, "the channel's URL cannot be changed");
    answer = 200;
    await h.request('POST', `${CHANNELS}/${id}/test`, { token: h.platformToken });
    const all = await receiver.waitFor(3);
    assert.equal(all[2]!.url, '/second', 'the test after the URL change went to the old URL');
  });

  test('a channel a rule uses cannot be deleted (409); once unused it is (204), audited without secrets', async () => {
    const created = await create({
      name: 'slack',
      kind: 'SLACK',
      config: { webhookUrl: 'https://hooks.example.com/T/B/zzsecret' },
    });
    const id = created.body.id;
    const current = await h.request('GET', RULES, { token: h.platformToken });
    const put = await h.request('PUT', RULES, {
      token: h.platformToken,
      body: {
        defaults: { channelIds: [], repeatIntervalSeconds: 3600 },
        rules: [{ name: 'all', matchers: [], channelIds: [id] }],
      },
      headers: { 'if-match': String(current.body.revision) },
    });
    assert.equal(put.status, 200, put.text);
    const refused = await h.request('DELETE', `${CHANNELS}/${id}`, { token: h.platformToken });
    assert.equal(refused.status, 409, 'a channel a rule uses can be deleted');
    assert.equal(
      refused.body.code,
      'conflict',
      'deleting a channel in use is refused for another reason than conflict',
    );
    assert.equal(
      refused.body.detail,
      'rule “all” uses this channel; change the rules first.',
      'the refusal does not name the rule that uses the channel',
    );

    const cleared = await h.request('PUT', RULES, {
      token: h.platformToken,
      body: { defaults: { channelIds: [], repeatIntervalSeconds: 3600 }, rules: [] },
    });
    assert.equal(cleared.status, 200, cleared.text);
    const deleted = await h.request('DELETE', `${CHANNELS}/${id}`, { token: h.platformToken });
    assert.equal(deleted.status, 204, 'an unused channel cannot be deleted');
    assert.equal(
      (await h.request('GET', `${CHANNELS}/${id}`, { token: h.platformToken })).status,
      404,
      'a deleted channel can still be read',
    );
    assert.equal(
      (await h.request('DELETE', `${CHANNELS}/${id}`, { token: h.platformToken })).status,
      404,
      'a deleted channel can be deleted again',
    );

    const audit = await h.database.kysely
      .selectFrom('audit_log')
      .selectAll()
      .where('target_id', '=', id)
      .orderBy('created_at')
      .execute();
    assert.deepEqual(
      audit.map((a) => a.action),
      ['alerting.channel.create', 'alerting.channel.delete'],
      "the channel's creation and deletion are not both audited, in order",
    );
    assert.ok(
      audit.every((a) => a.actor_type === 'platform_key' && a.request_id),
      'a channel audit row is not by the platform key, or has no request ID',
    );
    assert.ok(
      !JSON.stringify(audit).includes('zzsecret'),
      "a channel audit row carries the channel's secret",
    );
    assertNoLeak(h, ['zzsecret']);
  });
});

describe('a stored secret is never sent to a destination it was not given for', () => {
  const patch = (id: string, body: unknown) =>
    h.request('PATCH', `${CHANNELS}/${id}`, { token: h.platformToken, body });
  const read = async (id: string) => {
    const response = await h.request('GET', `${CHANNELS}/${id}`, { token: h.platformToken });
    assert.equal(response.status, 200, `the channel cannot be read: ${response.text}`);
    const { lastAttempt: _attempt, ...channel } = response.body;
    return channel;
  };

  /** A refused PATCH: 400 naming the secret field, and nothing written (the channel, the audit log). */
  async function assertRefused(id: string, body: unknown, secretField: string): Promise<void> {
    const before = await read(id);
    const audits = await count('audit_log');
    const refused = await patch(id, body);
    assert.equal(refused.status, 400, `${JSON.stringify(body)} was not refused: ${refused.text}`);
    assert.equal(
      refused.body.code,
      'validation_failed',
      `${JSON.stringify(body)} was refused for another reason than validation`,
    );
    assert.deepEqual(
      refused.body.errors.map((e: { path: string }) => e.path),
      [`config.${secretField}`],
      `${JSON.stringify(body)}: the refusal does not name config.${secretField} alone`,
    );
    assert.deepEqual(
      await read(id),
      before,
      `${JSON.stringify(body)}: the refused PATCH changed the channel`,
    );
    assert.equal(await count('audit_log'), audits, `${JSON.stringify(body)}: the refused PATCH was audited`);
  }

  test('GRAFANA: a new baseUrl needs its serviceAccountToken in the same PATCH; the old token never goes to it', async (t) => {
    const oldToken = 'glsa_old-token-7f3a9c';
    const newToken = 'glsa_new-token-c41d02';
    const first = await startReceiver(t);
    const second = await startReceiver(t);
    const created = await create({
      name: 'grafana',
      kind: 'GRAFANA',
      config: { baseUrl: first.url('/grafana'), tags: ['hubgate'], serviceAccountToken: oldToken },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id;

    await assertRefused(id, { config: { baseUrl: second.url('/grafana') } }, 'serviceAccountToken');
    // Said again unchanged (as a form sends every field it shows), the URL needs no token.
    const same = await patch(id, { name: 'grafana 2', config: { baseUrl: first.url('/grafana') } });
    assert.equal(same.status, 200, `repeating the stored baseUrl is refused: ${same.text}`);

    const tested = await h.request('POST', `${CHANNELS}/${id}/test`, { token: h.platformToken });
    assert.equal(tested.body.ok, true, `the test after the refused PATCH failed: ${tested.text}`);
    const [atFirst] = await first.waitFor(1);
    assert.equal(
      atFirst?.headers.authorization,
      `Bearer ${oldToken}`,
      'after the refused PATCH, the test did not go to the old receiver with the old token',
    );
    assert.equal(second.received.length, 0, 'the refused PATCH sent something to the new receiver');

    const moved = await patch(id, {
      config: { baseUrl: second.url('/grafana'), serviceAccountToken: newToken },
    });
    assert.equal(moved.status, 200, `a new baseUrl with its token is refused: ${moved.text}`);
    assert.equal(moved.body.config.baseUrl, second.url('/grafana'), 'the new baseUrl was not stored');
    const again = await h.request('POST', `${CHANNELS}/${id}/test`, { token: h.platformToken });
    assert.equal(again.body.ok, true, `the test to the new receiver failed: ${again.text}`);
    const [atSecond] = await second.waitFor(1);
    assert.equal(
      atSecond?.headers.authorization,
      `Bearer ${newToken}`,
      'the new receiver did not get the new token',
    );
    assert.ok(
      second.received.every((r) => !JSON.stringify(r).includes(oldToken)),
      'the old token reached the new receiver',
    );
    assert.equal(first.received.length, 1, 'the old receiver got something after the channel moved');
    assertNoLeak(h, [oldToken, newToken]);
  });

  test('HTTP: a new url needs its secret headers again when some are stored', async (t) => {
    const oldHeader = 'Token old-header-9b1e44';
    const newHeader = 'Token new-header-2d7c85';
    const first = await startReceiver(t);
    const second = await startReceiver(t);
    const created = await create({
      name: 'http',
      kind: 'HTTP',
      config: { url: first.url('/notify'), headers: { authorization: oldHeader } },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id;

    await assertRefused(id, { config: { url: second.url('/notify') } }, 'headers');
    await h.request('POST', `${CHANNELS}/${id}/test`, { token: h.platformToken });
    const [atFirst] = await first.waitFor(1);
    assert.equal(atFirst?.headers.authorization, oldHeader, 'the old receiver did not get the old header');
    assert.equal(second.received.length, 0, 'the refused PATCH sent something to the new receiver');

    const moved = await patch(id, {
      config: { url: second.url('/notify'), headers: { authorization: newHeader } },
    });
    assert.equal(moved.status, 200, `a new url with its headers is refused: ${moved.text}`);
    await h.request('POST', `${CHANNELS}/${id}/test`, { token: h.platformToken });
    const [atSecond] = await second.waitFor(1);
    assert.equal(atSecond?.headers.authorization, newHeader, 'the new receiver did not get the new header');
    assert.ok(
      second.received.every((r) => !JSON.stringify(r).includes(oldHeader)),
      'the old header reached the new receiver',
    );

    // Removing the headers in the same PATCH is giving them too: nothing stored goes anywhere new.
    const cleared = await patch(id, { config: { url: first.url('/plain'), headers: null } });
    assert.equal(cleared.status, 200, `a new url with the headers removed is refused: ${cleared.text}`);
    assert.deepEqual(cleared.body.secretFields, ['url'], 'removing the headers left them stored');
    // With no headers stored there is nothing to give again.
    const bare = await patch(id, { config: { url: second.url('/plain') } });
    assert.equal(bare.status, 200, `a new url without stored headers is refused: ${bare.text}`);
    assertNoLeak(h, [oldHeader, newHeader]);
  });

  test('EMAIL: a new smtpHost needs its smtpPassword again when one is stored', async () => {
    const password = 'smtp-pw-5e0f1b';
    const created = await create({
      name: 'mail',
      kind: 'EMAIL',
      config: {
        to: ['ops@example.com'],
        from: 'hubgate@example.com',
        smtpHost: 'smtp.example.com',
        smtpPort: 587,
        smtpPassword: password,
      },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id;

    await assertRefused(id, { config: { smtpHost: 'smtp.elsewhere.example' } }, 'smtpPassword');
    const port = await patch(id, { config: { smtpHost: 'smtp.example.com', smtpPort: 465 } });
    assert.equal(port.status, 200, `a new port on the same host is refused: ${port.text}`);
    const moved = await patch(id, {
      config: { smtpHost: 'smtp.elsewhere.example', smtpPassword: 'smtp-pw-new-77a0c3' },
    });
    assert.equal(moved.status, 200, `a new host with its password is refused: ${moved.text}`);
    assert.equal(moved.body.config.smtpHost, 'smtp.elsewhere.example', 'the new SMTP host was not stored');
    assert.deepEqual(moved.body.secretFields, ['smtpPassword'], 'the new password was not stored');
    assertNoLeak(h, [password, 'smtp-pw-new-77a0c3']);
  });

  test('unknown config fields are refused whatever their value, null included; nothing is written', async () => {
    const created = await create({
      name: 'slack',
      kind: 'SLACK',
      config: { webhookUrl: 'https://hooks.example.com/T/B/unknown-fields' },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id;
    for (const value of [null, 1, 'x', {}]) {
      const before = await read(id);
      const audits = await count('audit_log');
      const refused = await patch(id, { config: { foo: value } });
      assert.equal(
        refused.status,
        400,
        `config.foo = ${JSON.stringify(value)} was accepted: ${refused.text}`,
      );
      assert.equal(
        refused.body.code,
        'validation_failed',
        `config.foo = ${JSON.stringify(value)}: wrong code`,
      );
      assert.equal(
        refused.body.errors[0].path,
        'config.foo',
        `config.foo = ${JSON.stringify(value)}: the refusal does not name config.foo`,
      );
      assert.deepEqual(await read(id), before, `config.foo = ${JSON.stringify(value)} changed the channel`);
      assert.equal(await count('audit_log'), audits, `config.foo = ${JSON.stringify(value)} was audited`);
    }
    // Another kind's field is unknown to this one too.
    const other = await patch(id, { config: { smtpPassword: null } });
    assert.equal(other.status, 400, `another kind's field was accepted: ${other.text}`);
    assert.equal(other.body.errors[0].path, 'config.smtpPassword', 'the refusal does not name the field');
  });
});
