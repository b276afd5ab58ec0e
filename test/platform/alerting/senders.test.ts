import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createSender } from '../../../src/outbound/sender.js';
import { CHANNEL_KIND_DEFINITIONS } from '../../../src/platform/alerting/kinds.js';
import type { ChannelSendResult, OpenChannel } from '../../../src/platform/alerting/notification.js';
import { annotationsUrl } from '../../../src/platform/alerting/senders/grafana.js';
import { FIRING_ENDS_AT } from '../../../src/platform/alerting/senders/index.js';
import { startReceiver } from '../../helpers/receiver.js';
import {
  channel,
  channelSender,
  ENDS_AT,
  fakeResolver,
  firing,
  group,
  policy,
  resolved,
  STARTS_AT,
  tripwire,
} from './senders-fixtures.js';

const sender = channelSender();
after(() => sender.close());

const newSigningSecret = () => {
  const generate = CHANNEL_KIND_DEFINITIONS.WEBHOOK.generated?.signingSecret;
  assert.ok(generate, 'WEBHOOK generates its signing secret');
  return generate();
};

const json = (text: string) => JSON.parse(text) as Record<string, unknown>;

const expectedAlert = {
  status: 'firing',
  labels: { alertname: 'DeliveryFailed', severity: 'critical', tenantId: 'ten_abc' },
  annotations: {
    summary: 'Delivery dlv_1 failed after 8 attempts',
    description: 'HTTP 500 from the receiver',
  },
  startsAt: '2025-01-02T03:04:05.000Z',
  endsAt: '0001-01-01T00:00:00Z',
  generatorURL: 'https://hub.example.test',
  fingerprint: 'fp_1',
};

const expectedBody = (receiver: string) => ({
  version: '4',
  groupKey: '{}:{alertname="DeliveryFailed", tenantId="ten_abc"}',
  truncatedAlerts: 0,
  status: 'firing',
  receiver,
  groupLabels: { alertname: 'DeliveryFailed', tenantId: 'ten_abc' },
  commonLabels: expectedAlert.labels,
  commonAnnotations: expectedAlert.annotations,
  externalURL: 'https://hub.example.test',
  alerts: [expectedAlert],
});

/** A port on 127.0.0.1 where nothing listens. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('WEBHOOK channel', () => {
  test('posts the Alertmanager-style body, signed as Standard Webhooks', async (t) => {
    const receiver = await startReceiver(t);
    const secret = newSigningSecret();
    const hook = channel('WEBHOOK', { url: receiver.url('/alerts/in?team=ops'), signingSecret: secret });
    assert.deepEqual(
      await sender.send(hook, firing),
      { ok: true, responseStatus: 200, error: null },
      "the first webhook notice is not reported delivered with the receiver's 200",
    );
    assert.deepEqual(
      await sender.send(hook, firing),
      { ok: true, responseStatus: 200, error: null },
      "the second webhook notice is not reported delivered with the receiver's 200",
    );
    const [got, again] = await receiver.waitFor(2);
    assert.ok(got && again, 'two requests arrived');
    assert.equal(got.method, 'POST', 'the webhook notice is not a POST');
    assert.equal(got.url, '/alerts/in?team=ops', 'the webhook notice went to another path or lost its query');
    assert.equal(got.headers['content-type'], 'application/json', 'the webhook notice is not sent as JSON');
    assert.match(
      String(got.headers['user-agent']),
      /^hubgate\/\d/,
      'the webhook notice does not say it comes from hubgate',
    );
    assert.match(
      String(got.headers['webhook-id']),
      /^ntf_[0-9A-Za-z]{22}$/,
      'the webhook-id is not a ntf_ ID',
    );
    assert.notEqual(got.headers['webhook-id'], again.headers['webhook-id'], 'a new id per notification');
    const verified = new Webhook(secret).verify(got.body, {
      'webhook-id': String(got.headers['webhook-id']),
      'webhook-timestamp': String(got.headers['webhook-timestamp']),
      'webhook-signature': String(got.headers['webhook-signature']),
    });
    assert.deepEqual(
      verified,
      expectedBody('ops webhook'),
      'the signed body is not the Alertmanager-style body',
    );
    assert.throws(
      () =>
        new Webhook(newSigningSecret()).verify(got.body, {
          'webhook-id': String(got.headers['webhook-id']),
          'webhook-timestamp': String(got.headers['webhook-timestamp']),
          'webhook-signature': String(got.headers['webhook-signature']),
        }),
      'the notice also verifies with another signing secret',
    );
  });

  test('a resolved notice carries its end time', async (t) => {
    const receiver = await startReceiver(t);
    const hook = channel('WEBHOOK', { url: receiver.url(), signingSecret: newSigningSecret() });
    assert.equal(
      (await sender.send(hook, resolved)).ok,
      true,
      'the resolved webhook notice is not reported delivered',
    );
    const [got] = await receiver.waitFor(1);
    const body = json(got?.body ?? '');
    assert.equal(body.status, 'resolved', 'the resolved notice does not say resolved');
    assert.deepEqual(
      body.alerts,
      [{ ...expectedAlert, status: 'resolved', endsAt: ENDS_AT.toISOString() }],
      'the resolved alert does not carry its end time',
    );
  });

  test('a 500 answer is a failure with its status', async (t) => {
    const receiver = await startReceiver((_r, _i, res) => {
      res.statusCode = 500;
      res.end('boom');
    });
    t.after(() => receiver.close());
    const hook = channel('WEBHOOK', { url: receiver.url(), signingSecret: newSigningSecret() });
    assert.deepEqual(
      await sender.send(hook, firing),
      {
        ok: false,
        responseStatus: 500,
        error: 'http_status: HTTP 500',
      },
      'a 500 answer is not reported as a failure with its status',
    );
  });

  test('no answer within the timeout is a timeout', async (t) => {
    const receiver = await startReceiver(() => {
      // never answers
    });
    const quick = channelSender({ timeoutMs: 300 });
    t.after(() => quick.close());
    t.after(() => receiver.close());
    const hook = channel('WEBHOOK', { url: receiver.url(), signingSecret: newSigningSecret() });
    const result = await quick.send(hook, firing);
    assert.equal(result.ok, false, 'no answer within the timeout is reported as success');
    assert.equal(result.responseStatus, null, 'a timeout reports an HTTP status');
    assert.match(
      result.error ?? '',
      /^timeout: /,
      'no answer within the timeout is not reported as a timeout',
    );
  });
});

describe('SLACK channel', () => {
  test('posts a one-line text, a mrkdwn heading and a plain_text section per alert; `ok` is success', async (t) => {
    const receiver = await startReceiver(t);
    const slack = channel('SLACK', { webhookUrl: receiver.url('/services/T000/B000/XXXX') });
    assert.deepEqual(
      await sender.send(slack, firing),
      { ok: true, responseStatus: 200, error: null },
      'the Slack notice is not reported delivered on ok',
    );
    const [got] = await receiver.waitFor(1);
    assert.ok(got, 'a request arrived');
    assert.equal(got.method, 'POST', 'the Slack notice is not a POST');
    assert.equal(
      got.url,
      '/services/T000/B000/XXXX',
      'the Slack notice went to another path than the webhook URL',
    );
    assert.equal(got.headers['content-type'], 'application/json', 'the Slack notice is not sent as JSON');
    const body = json(got.body) as {
      text: string;
      blocks: Array<{ type: string; text: { type: string; text: string; emoji?: boolean } }>;
    };
    assert.equal(
      body.text,
      '[FIRING] DeliveryFailed (tenant ten_abc)',
      'the Slack notification line is not the one-line title',
    );
    assert.deepEqual(
      body.blocks[0],
      {
        type: 'section',
        text: { type: 'mrkdwn', text: '*[FIRING] DeliveryFailed (tenant ten_abc)*' },
      },
      'the Slack heading is not the bold title in mrkdwn',
    );
    assert.equal(
      body.blocks.length,
      2,
      'the Slack notice does not hold the heading and one section for the one alert',
    );
    assert.equal(
      body.blocks[1]?.text.type,
      'plain_text',
      "the alert's section is not plain_text, so Slack would parse markup",
    );
    assert.equal(body.blocks[1]?.text.emoji, false, "the alert's section lets Slack turn text into emoji");
    assert.deepEqual(
      body.blocks[1]?.text.text.split('\n'),
      [
        'Status: firing',
        'Alert: DeliveryFailed',
        'Severity: critical',
        'Summary: Delivery dlv_1 failed after 8 attempts',
        'Description: HTTP 500 from the receiver',
        'Started: 2025-01-02T03:04:05.000Z',
        'Labels: alertname=DeliveryFailed severity=critical tenantId=ten_abc',
      ],
      "the alert's section does not list its fields line by line",
    );
  });

  test('text from alerts cannot become Slack markup (mentions, links, formatting) nor break a line', async (t) => {
    const receiver = await startReceiver(t);
    const slack = channel('SLACK', { webhookUrl: receiver.url() });
    const [alert] = resolved.alerts;
    assert.ok(alert, 'fixture');
    const summary = '<!channel> see <https://evil.example|here> & *more*\nACTION';
    const notification = {
      status: 'resolved' as const,
      alerts: [{ ...alert, annotations: { summary } }],
    };
    assert.equal(
      (await sender.send(slack, notification)).ok,
      true,
      'the resolved Slack notice is not reported delivered',
    );
    const [got] = await receiver.waitFor(1);
    const text = got?.body ?? '';
    const body = json(text) as { text: string; blocks: Array<{ text: { type: string; text: string } }> };
    assert.equal(
      body.text,
      '[RESOLVED] DeliveryFailed (tenant ten_abc)',
      'the Slack notification line is not the resolved title',
    );
    const escaped =
      '\\u003c!channel\\u003e see \\u003chttps://evil.example|here\\u003e \\u0026 *more*\\nACTION';
    assert.equal(
      body.blocks[1]?.text.type,
      'plain_text',
      "the alert's section is not plain_text, so Slack would parse markup",
    );
    const lines = body.blocks[1]?.text.text.split('\n') ?? [];
    assert.ok(lines.includes(`Summary: ${escaped}`), text);
    assert.ok(lines.includes(`Ended: ${ENDS_AT.toISOString()}`), text);
  });

  for (const [status, token] of [
    [400, 'invalid_payload'],
    [404, 'no_service'],
    [404, 'channel_not_found'],
    [403, 'action_prohibited'],
    [403, 'invalid_token'],
  ] as const) {
    test(`${status} ${token} is a failure that names it`, async (t) => {
      const receiver = await startReceiver((_r, _i, res) => {
        res.statusCode = status;
        res.end(token);
      });
      t.after(() => receiver.close());
      const slack = channel('SLACK', { webhookUrl: receiver.url() });
      assert.deepEqual(
        await sender.send(slack, firing),
        {
          ok: false,
          responseStatus: status,
          error: `http_status: HTTP ${status}: ${token}`,
        },
        `${status} ${token} is not reported as a failure naming the token`,
      );
    });
  }

  test('an error body that is not a Slack token is not quoted', async (t) => {
    const receiver = await startReceiver((_r, _i, res) => {
      res.statusCode = 502;
      res.end('<html><body>Bad Gateway: upstream /services/T000 said no</body></html>');
    });
    t.after(() => receiver.close());
    const slack = channel('SLACK', { webhookUrl: receiver.url() });
    assert.deepEqual(
      await sender.send(slack, firing),
      {
        ok: false,
        responseStatus: 502,
        error: 'http_status: HTTP 502',
      },
      'an HTML error body is quoted in the error',
    );
  });

  test('a 200 whose body is not `ok` is a failure', async (t) => {
    for (const answer of ['not ok', '', '{"ok":false}', 'invalid_payload']) {
      const receiver = await startReceiver((_r, _i, res) => {
        res.end(answer);
      });
      t.after(() => receiver.close());
      const slack = channel('SLACK', { webhookUrl: receiver.url() });
      const result = await sender.send(slack, firing);
      assert.equal(result.ok, false, answer);
      assert.equal(
        result.responseStatus,
        200,
        `${JSON.stringify(answer)}: the failure does not report the 200`,
      );
      assert.match(
        result.error ?? '',
        /^slack_error: HTTP 200/,
        `${JSON.stringify(answer)}: the failure is not a Slack error`,
      );
      if (answer === 'invalid_payload')
        assert.equal(
          result.error,
          'slack_error: HTTP 200 invalid_payload',
          'the Slack error does not name invalid_payload',
        );
    }
  });
});

describe('GRAFANA channel', () => {
  test('posts an annotation with the service account token, under the base path', async (t) => {
    const receiver = await startReceiver((_r, _i, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{"message":"Annotation added","id":17}');
    });
    t.after(() => receiver.close());
    const grafana = channel('GRAFANA', {
      baseUrl: `http://127.0.0.1:${receiver.port}/grafana/`,
      tags: ['hubgate', 'prod', 'firing'],
      serviceAccountToken: 'glsa_ServiceAccountToken_0123456789',
    });
    assert.deepEqual(
      await sender.send(grafana, firing),
      { ok: true, responseStatus: 200, error: null },
      'the Grafana annotation is not reported delivered',
    );
    assert.equal(
      (await sender.send(grafana, resolved)).ok,
      true,
      'the resolved Grafana annotation is not reported delivered',
    );
    const [first, second] = await receiver.waitFor(2);
    assert.ok(first && second, 'two requests arrived');
    assert.equal(first.method, 'POST', 'the Grafana annotation is not a POST');
    assert.equal(
      first.url,
      '/grafana/api/annotations',
      'the annotation went to another path than under the base path',
    );
    assert.equal(
      first.headers.authorization,
      'Bearer glsa_ServiceAccountToken_0123456789',
      'the annotation is not sent with the service account token',
    );
    assert.equal(first.headers['content-type'], 'application/json', 'the annotation is not sent as JSON');
    assert.deepEqual(
      json(first.body),
      {
        time: STARTS_AT.getTime(),
        tags: ['hubgate', 'prod', 'firing', 'DeliveryFailed'],
        text: '[FIRING] DeliveryFailed (tenant ten_abc): Delivery dlv_1 failed after 8 attempts',
      },
      'the firing annotation does not carry its time, tags and text',
    );
    assert.deepEqual(
      json(second.body),
      {
        time: STARTS_AT.getTime(),
        timeEnd: ENDS_AT.getTime(),
        tags: ['hubgate', 'prod', 'firing', 'DeliveryFailed', 'resolved'],
        text: '[RESOLVED] DeliveryFailed (tenant ten_abc): Delivery dlv_1 failed after 8 attempts',
      },
      'the resolved annotation does not carry its end time and the resolved tag',
    );
  });

  test('the annotations URL is joined to any base', () => {
    assert.equal(
      annotationsUrl('https://g.example.com'),
      'https://g.example.com/api/annotations',
      'the annotations URL of a bare host is wrong',
    );
    assert.equal(
      annotationsUrl('https://g.example.com/'),
      'https://g.example.com/api/annotations',
      'the annotations URL of a host with a trailing slash is wrong',
    );
    assert.equal(
      annotationsUrl('https://g.example.com/grafana'),
      'https://g.example.com/grafana/api/annotations',
      'the annotations URL under a base path is wrong',
    );
    assert.equal(
      annotationsUrl('https://g.example.com/grafana//'),
      'https://g.example.com/grafana/api/annotations',
      'the annotations URL under a base path with slashes is wrong',
    );
    assert.equal(
      annotationsUrl('https://g.example.com:3000/a/b/?x=1#y'),
      'https://g.example.com:3000/a/b/api/annotations',
      "the annotations URL keeps the base's query or fragment, or loses its port",
    );
  });

  test('401 is a failure with its status', async (t) => {
    const receiver = await startReceiver((_r, _i, res) => {
      res.statusCode = 401;
      res.end('{"message":"Unauthorized"}');
    });
    t.after(() => receiver.close());
    const grafana = channel('GRAFANA', {
      baseUrl: `http://127.0.0.1:${receiver.port}`,
      tags: [],
      serviceAccountToken: 'glsa_wrong',
    });
    assert.deepEqual(
      await sender.send(grafana, firing),
      {
        ok: false,
        responseStatus: 401,
        error: 'http_status: HTTP 401',
      },
      'a refused Grafana token is not reported as a failure with 401',
    );
    assert.equal(
      (await receiver.waitFor(1))[0]?.url,
      '/api/annotations',
      'the refused annotation went to another path',
    );
  });
});

describe('HTTP channel', () => {
  test('sends the unsigned body with the configured method and headers, never Host or Content-Length', async (t) => {
    const receiver = await startReceiver(t);
    const http = channel('HTTP', {
      url: receiver.url('/notify'),
      method: 'PUT',
      headers: {
        Authorization: 'Token custom-header-secret-value',
        'X-Team': 'ops',
        Host: 'evil.example',
        'CONTENT-LENGTH': '1',
        'Content-Type': 'text/plain',
        'Transfer-Encoding': 'chunked',
        'User-Agent': 'ops-bridge/2',
      },
    });
    assert.deepEqual(
      await sender.send(http, firing),
      { ok: true, responseStatus: 200, error: null },
      'the HTTP notice is not reported delivered',
    );
    const [got] = await receiver.waitFor(1);
    assert.ok(got, 'a request arrived');
    assert.equal(got.method, 'PUT', 'the HTTP notice is not sent with the configured method');
    assert.equal(got.url, '/notify', 'the HTTP notice went to another path');
    assert.equal(
      got.headers.authorization,
      'Token custom-header-secret-value',
      'the HTTP notice lost its Authorization header',
    );
    assert.equal(got.headers['x-team'], 'ops', 'the HTTP notice lost a configured header');
    assert.equal(
      got.headers['user-agent'],
      'ops-bridge/2',
      'the HTTP notice does not carry the configured User-Agent',
    );
    assert.equal(got.headers.host, `127.0.0.1:${receiver.port}`, 'a configured Host header was sent');
    assert.equal(got.headers['content-type'], 'application/json', 'a configured Content-Type replaced JSON');
    assert.equal(
      got.headers['content-length'],
      String(Buffer.byteLength(got.body)),
      "a configured Content-Length was sent instead of the body's",
    );
    assert.equal(got.headers['transfer-encoding'], undefined, 'a configured Transfer-Encoding was sent');
    assert.equal(
      got.headers['webhook-signature'],
      undefined,
      'the HTTP notice is signed, though HTTP channels are unsigned',
    );
    assert.deepEqual(
      json(got.body),
      expectedBody('ops http'),
      "the HTTP notice's body is not the Alertmanager-style body",
    );
  });

  test('POST when no method is set; PATCH when asked', async (t) => {
    const receiver = await startReceiver(t);
    assert.equal(
      (await sender.send(channel('HTTP', { url: receiver.url() }), firing)).ok,
      true,
      'an HTTP notice without a method is not delivered',
    );
    assert.equal(
      (await sender.send(channel('HTTP', { url: receiver.url(), method: 'PATCH' }), firing)).ok,
      true,
      'an HTTP notice with PATCH is not delivered',
    );
    const [first, second] = await receiver.waitFor(2);
    assert.equal(first?.method, 'POST', 'an HTTP channel without a method does not POST');
    assert.match(
      String(first?.headers['user-agent']),
      /^hubgate\//,
      'the HTTP notice does not say it comes from hubgate when no User-Agent is set',
    );
    assert.equal(second?.method, 'PATCH', 'the HTTP channel does not send with the PATCH it was given');
  });

  test('503 is a failure with its status; a redirect is refused, not followed', async (t) => {
    const receiver = await startReceiver((request, _i, res) => {
      if (request.url === '/moved') {
        res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' });
        res.end();
        return;
      }
      res.statusCode = 503;
      res.end('down');
    });
    t.after(() => receiver.close());
    assert.deepEqual(
      await sender.send(channel('HTTP', { url: receiver.url() }), firing),
      {
        ok: false,
        responseStatus: 503,
        error: 'http_status: HTTP 503',
      },
      'a 503 is not reported as a failure with its status',
    );
    assert.deepEqual(
      await sender.send(channel('HTTP', { url: receiver.url('/moved') }), firing),
      {
        ok: false,
        responseStatus: 302,
        error: 'redirect_refused: HTTP 302: redirects are not followed',
      },
      'a redirect is followed or not reported as refused',
    );
    assert.equal(receiver.received.length, 2, 'the redirect was followed');
  });

  test('a header value with a line break is refused before anything is sent', async (t) => {
    const receiver = await startReceiver(t);
    const http = channel('HTTP', { url: receiver.url(), headers: { 'X-A': 'one\r\nX-Injected: two' } });
    assert.deepEqual(
      await sender.send(http, firing),
      {
        ok: false,
        responseStatus: null,
        error: 'invalid_config: a header value is not a single-line string',
      },
      'a header value with a line break is not refused as invalid config',
    );
    assert.equal(receiver.received.length, 0, 'a request was sent with an injected header');
  });
});

/** A channel of each HTTP kind whose destination is `url`. */
const httpChannels = (url: string): OpenChannel[] => [
  channel('WEBHOOK', { url, signingSecret: newSigningSecret() }),
  channel('SLACK', { webhookUrl: url }),
  channel('GRAFANA', { baseUrl: url, tags: [], serviceAccountToken: 'glsa_token_value_1' }),
  channel('HTTP', { url, headers: { authorization: 'Bearer header-value-1' } }),
];

describe('SSRF policy at send time', () => {
  test('a refused address literal is never connected to (127.0.0.2, [::1])', async (t) => {
    for (const [host, literal, range] of [
      ['127.0.0.2', '127.0.0.2', 'loopback (127.0.0.0/8)'],
      ['::1', '[::1]', 'loopback (::1/128)'],
    ] as const) {
      const wire = await tripwire(host);
      t.after(() => wire.close());
      for (const target of httpChannels(`http://${literal}:${wire.port}/`)) {
        assert.deepEqual(
          await sender.send(target, firing),
          {
            ok: false,
            responseStatus: null,
            error: `destination_forbidden: address ${host} is in a refused range: ${range}`,
          },
          target.kind,
        );
      }
      assert.equal(wire.hits(), 0, `${host}: a refused address was connected to`);
    }
  });

  test('local names are refused without a lookup', async (t) => {
    const dns = fakeResolver('127.0.0.1');
    const guarded = channelSender({ resolve: dns.resolve });
    t.after(() => guarded.close());
    for (const name of ['localhost', 'api.localhost', 'metadata.google.internal', 'db.internal']) {
      for (const target of httpChannels(`http://${name}:8080/`)) {
        const result = await guarded.send(target, firing);
        assert.equal(result.ok, false, `${name} (${target.kind}): a local name is reported sent`);
        assert.equal(
          result.error,
          `destination_forbidden: host ${name} is not allowed (local name)`,
          `${name} (${target.kind}): a local name is not refused as such`,
        );
      }
    }
    assert.deepEqual(dns.asked, [], 'a local name was looked up');
  });

  test('a name resolving to a refused address is refused, and nothing there is reached', async (t) => {
    const wire = await tripwire('127.0.0.2');
    const dns = fakeResolver('127.0.0.2');
    const guarded = channelSender({ resolve: dns.resolve });
    t.after(() => guarded.close());
    t.after(() => wire.close());
    for (const target of httpChannels(`http://hooks.example.test:${wire.port}/`)) {
      assert.deepEqual(
        await guarded.send(target, firing),
        {
          ok: false,
          responseStatus: null,
          error:
            'destination_forbidden: hooks.example.test resolves to 127.0.0.2, in a refused range: loopback (127.0.0.0/8)',
        },
        `${target.kind}: a name resolving to loopback is not refused naming the address`,
      );
    }
    assert.ok(dns.asked.length > 0, 'the name was resolved');
    assert.equal(wire.hits(), 0, 'a name resolving to a refused address was connected to');
  });

  test('a name resolving to an allowed address is sent to that address (pinned)', async (t) => {
    const receiver = await startReceiver();
    const dns = fakeResolver('127.0.0.1');
    const guarded = channelSender({ resolve: dns.resolve });
    t.after(() => guarded.close());
    t.after(() => receiver.close());
    const hook = channel('HTTP', { url: `http://hooks.example.test:${receiver.port}/x` });
    assert.equal(
      (await guarded.send(hook, firing)).ok,
      true,
      'a name resolving to an allowed address is not sent',
    );
    assert.equal(
      (await receiver.waitFor(1))[0]?.headers.host,
      `hooks.example.test:${receiver.port}`,
      'the request to the pinned address lost the name in its Host header',
    );
    assert.deepEqual(dns.asked, ['hooks.example.test'], 'the name was not looked up exactly once');
  });

  test('plain http is refused unless the policy allows it', async (t) => {
    const receiver = await startReceiver();
    const strict = channelSender({ policy: { ...policy, allowHttp: false } });
    t.after(() => strict.close());
    t.after(() => receiver.close());
    for (const target of httpChannels(receiver.url())) {
      assert.deepEqual(
        await strict.send(target, firing),
        {
          ok: false,
          responseStatus: null,
          error: 'destination_forbidden: must use https',
        },
        `${target.kind}: plain http is not refused as the policy requires`,
      );
    }
    assert.equal(receiver.received.length, 0, 'a notice was sent over plain http');
  });
});

describe('errors never quote a secret', () => {
  test('whatever fails, no URL path, query, token, header value or signing secret is in the error', async (t) => {
    const secrets = {
      path: '/services/T0SECRET/B0SECRET/xoxSecretPart',
      query: 'token=QuerySecretValue',
      grafanaToken: 'glsa_GrafanaSecretToken_42',
      header: 'HeaderSecretValue-99',
      signingSecret: newSigningSecret(),
    };
    const echo = await startReceiver((request, _i, res) => {
      // A hostile or broken receiver echoing what it was sent.
      res.statusCode = 400;
      res.end(`${request.url} ${JSON.stringify(request.headers)}`);
    });
    const port = await closedPort();
    const wire = await tripwire('127.0.0.2');
    const failingDns = channelSender({
      resolve: async () => {
        throw Object.assign(new Error(`lookup failed for ${secrets.path}?${secrets.query}`), {
          code: 'ENOTFOUND',
        });
      },
    });
    const results: Array<[string, ChannelSendResult]> = [];
    const configs = (url: string): OpenChannel[] => [
      channel('WEBHOOK', { url, signingSecret: secrets.signingSecret }),
      channel('SLACK', { webhookUrl: url }),
      channel('GRAFANA', { baseUrl: url, tags: [], serviceAccountToken: secrets.grafanaToken }),
      channel('HTTP', { url, method: 'POST', headers: { 'x-api-key': secrets.header } }),
    ];
    t.after(() => failingDns.close());
    t.after(() => wire.close());
    t.after(() => echo.close());
    for (const base of [
      `http://127.0.0.1:${echo.port}`,
      `http://127.0.0.1:${port}`,
      `http://127.0.0.2:${wire.port}`,
      `https://127.0.0.1:${echo.port}`,
      `http://user:${secrets.header}@127.0.0.1:${echo.port}`,
    ]) {
      for (const target of configs(`${base}${secrets.path}?${secrets.query}`)) {
        results.push([`${target.kind} ${base}`, await sender.send(target, firing)]);
      }
    }
    for (const target of configs(`http://hooks.example.test${secrets.path}?${secrets.query}`)) {
      results.push([`${target.kind} dns`, await failingDns.send(target, firing)]);
    }
    assert.ok(echo.received.length > 0, 'the echoing receiver was reached');
    for (const [what, result] of results) {
      assert.equal(result.ok, false, what);
      assert.ok(result.error, what);
      for (const secret of [...Object.values(secrets), 'T0SECRET', 'QuerySecretValue']) {
        assert.ok(!result.error.includes(secret), `${what}: ${result.error}`);
      }
    }
    assert.equal(wire.hits(), 0, 'the refused address was connected to');
  });

  test('a config the routes would have refused fails the send, naming only the field', async () => {
    assert.deepEqual(
      await sender.send(channel('WEBHOOK', { signingSecret: newSigningSecret() }), firing),
      {
        ok: false,
        responseStatus: null,
        error: 'invalid_config: url is missing',
      },
      'a webhook without a URL is not refused as invalid config naming the field',
    );
    assert.deepEqual(
      await sender.send(
        channel('GRAFANA', { baseUrl: 'not a url', tags: [], serviceAccountToken: 'x' }),
        firing,
      ),
      {
        ok: false,
        responseStatus: null,
        error: 'invalid_config: baseUrl is not a URL',
      },
      'a Grafana base that is not a URL is not refused as invalid config naming the field',
    );
  });
});

describe('outbound sender keepBody', () => {
  test('keeps the first 4 KiB of the answer as text only when asked', async (t) => {
    const receiver = await startReceiver((_r, _i, res) => {
      res.end('x'.repeat(10_000));
    });
    const http = createSender({ policy, timeoutMs: 3_000 });
    t.after(() => http.close());
    t.after(() => receiver.close());
    const request = { method: 'POST' as const, url: receiver.url(), headers: {}, body: '{}' };
    const kept = await http.send({ ...request, keepBody: true });
    assert.equal(kept.ok, true, 'the answer kept for a test is not reported delivered');
    assert.equal(kept.body, 'x'.repeat(4096), 'the kept answer is not its first 4 KiB');
    const plain = await http.send(request);
    assert.equal(plain.ok, true, 'the plain send is not reported delivered');
    assert.equal(plain.body, undefined, 'the answer was kept though nobody asked for it');
  });
});

test('firing alerts end at the zero time, as Alertmanager says', () => {
  assert.equal(
    FIRING_ENDS_AT,
    '0001-01-01T00:00:00Z',
    "firing alerts do not end at Alertmanager's zero time",
  );
});

describe('a group of alerts', () => {
  test('is one message per channel: counted in the title, each alert listed, what did not fit counted', async (t) => {
    const receiver = await startReceiver(t);
    const hook = channel('WEBHOOK', { url: receiver.url('/hook'), signingSecret: newSigningSecret() });
    const slack = channel('SLACK', { webhookUrl: receiver.url('/slack') });
    const grafana = channel('GRAFANA', {
      baseUrl: `http://127.0.0.1:${receiver.port}`,
      tags: [],
      serviceAccountToken: 'glsa_ServiceAccountToken_0123456789',
    });
    for (const target of [hook, slack, grafana])
      assert.equal(
        (await sender.send(target, group)).ok,
        true,
        `the group notice to ${target.kind} is not reported delivered`,
      );
    const [webhook, chat, annotation] = (await receiver.waitFor(3)).map((r) => json(r.body));

    assert.equal(webhook?.truncatedAlerts, 5, 'the webhook notice does not count the 5 alerts left out');
    assert.equal((webhook?.alerts as unknown[]).length, 25, 'the webhook notice does not list 25 alerts');
    assert.deepEqual(
      webhook?.groupLabels,
      { alertname: 'DeliveryFailed', tenantId: 'ten_abc' },
      'the webhook notice does not carry the group labels',
    );
    assert.deepEqual(
      webhook?.commonAnnotations,
      {},
      'the webhook notice carries annotations common to alerts whose summaries differ',
    );

    const blocks = (chat as { blocks: Array<{ text: { text: string } }> }).blocks;
    assert.equal(
      chat?.text,
      '[FIRING:30] DeliveryFailed (tenant ten_abc)',
      "the Slack notification line does not count the group's 30 alerts",
    );
    assert.equal(blocks.length, 22, 'the heading, 20 alerts, and how many more');
    assert.equal(
      blocks.at(-1)?.text.text,
      '…and 10 more',
      'the Slack notice does not count the 10 alerts not listed',
    );

    // The summaries differ: the annotation names the group, not one alert of it.
    assert.equal(
      annotation?.text,
      '[FIRING:30] DeliveryFailed (tenant ten_abc)',
      'the Grafana annotation does not name the group with its count',
    );
  });
});
