import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { worstRoutingLabel, worstRoutingRegexes } from '../../../bench/patterns-inputs.js';
import { newId } from '../../../src/crypto/ids.js';
import { routeAlert, type RoutingDocument, type RoutingRule } from '../../../src/platform/alerting/rules.js';
import { makeKey, makeSignedInTenant } from '../../helpers/factories.js';
import { startHarness, type Harness } from '../../helpers/harness.js';

const PATH = '/api/v1/platform/alerting/rules';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

/** A channel row for rules to name (the rules only need the ID to exist). */
async function makeChannel(): Promise<string> {
  const id = newId('chn');
  const now = new Date();
  await h.database.kysely
    .insertInto('alert_channels')
    .values({
      id,
      name: `channel ${id}`,
      kind: 'SLACK',
      enabled: true,
      config: JSON.stringify({}),
      secrets_sealed: 'unused-by-these-tests',
      secret_fields: JSON.stringify(['webhookUrl']),
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

const get = () => h.request('GET', PATH, { token: h.platformToken });
const put = (body: unknown, headers: Record<string, string> = {}) =>
  h.request('PUT', PATH, { token: h.platformToken, body, headers });
const auditCount = async () =>
  (
    await h.database.kysely
      .selectFrom('audit_log')
      .select('id')
      .where('action', '=', 'alerting.rules.replace')
      .execute()
  ).length;

describe('alert routing rules: GET and PUT', () => {
  test('before any PUT: revision 0, no default channels, 1 h repeat, no rules, ETag "0"', async () => {
    const response = await get();
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(
      response.body,
      {
        revision: 0,
        defaults: { channelIds: [], repeatIntervalSeconds: 3600 },
        rules: [],
      },
      'the rules before any PUT are not the empty document at revision 0',
    );
    assert.equal(response.headers.get('etag'), '"0"', 'the rules before any PUT carry another ETag than "0"');
  });

  test('PUT replaces the document, assigns rule IDs and defaults, bumps the revision; GET reads it back', async () => {
    const [a, b] = [await makeChannel(), await makeChannel()];
    const before = (await get()).body.revision;
    const keptId = newId('rul');
    const response = await put({
      defaults: { channelIds: [a], repeatIntervalSeconds: 600 },
      rules: [
        {
          name: 'Delivery failures to Slack',
          matchers: [{ name: 'alertname', op: '=~', value: 'Delivery.*' }],
          channelIds: [b],
        },
        {
          id: keptId,
          name: 'Critical everywhere',
          enabled: false,
          matchers: [{ name: 'severity', op: '=', value: 'critical' }],
          channelIds: [a, b],
          continue: true,
          repeatIntervalSeconds: 60,
        },
      ],
    });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.revision, before + 1, 'PUT did not bump the revision by one');
    assert.equal(
      response.headers.get('etag'),
      `"${before + 1}"`,
      "the PUT answer's ETag is not the new revision",
    );
    const [first, second] = response.body.rules;
    assert.match(first.id, /^rul_[0-9A-Za-z]{22}$/, 'the new rule was not given a rul_ ID');
    assert.deepEqual(
      first,
      {
        id: first.id,
        name: 'Delivery failures to Slack',
        enabled: true,
        matchers: [{ name: 'alertname', op: '=~', value: 'Delivery.*' }],
        channelIds: [b],
        continue: false,
        repeatIntervalSeconds: null,
      },
      'the new rule lacks a defaulted field or changed one given',
    );
    assert.equal(second.id, keptId, 'the rule ID given was not kept');
    assert.equal(second.enabled, false, "the rule's enabled: false was not kept");
    assert.equal(second.continue, true, "the rule's continue: true was not kept");
    assert.equal(second.repeatIntervalSeconds, 60, "the rule's repeat interval was not kept");

    const read = await get();
    assert.deepEqual(read.body, response.body, 'GET reads back something other than PUT answered');
    assert.equal(read.headers.get('etag'), `"${before + 1}"`, "GET's ETag is not the new revision");

    // The same body again keeps the IDs it names and is a new revision all the same.
    const again = await put({ defaults: read.body.defaults, rules: read.body.rules });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.revision, before + 2, 'the same body again did not make a new revision');
    assert.deepEqual(again.body.rules, read.body.rules, 'the same body again changed the rules or their IDs');
  });

  test('If-Match: the current revision (bare, quoted, in a list, or *) succeeds; a stale one is 409', async () => {
    const body = { defaults: { channelIds: [], repeatIntervalSeconds: 3600 }, rules: [] };
    let revision: number = (await get()).body.revision;
    for (const ifMatch of [`${revision}`, `"${revision + 1}"`, `"7777", ${revision + 2}`, '*']) {
      const response = await put(body, { 'if-match': ifMatch });
      assert.equal(response.status, 200, `${ifMatch}: ${response.text}`);
      assert.equal(
        response.body.revision,
        revision + 1,
        `If-Match ${ifMatch}: the revision did not go up by one`,
      );
      revision += 1;
    }

    const current = await get();
    const audits = await auditCount();
    const stale = await put(
      { defaults: { channelIds: [], repeatIntervalSeconds: 60 }, rules: [] },
      { 'if-match': `"${revision - 1}"` },
    );
    assert.equal(stale.status, 409, stale.text);
    assert.equal(stale.body.code, 'conflict', 'a stale If-Match is refused for another reason than conflict');
    assert.deepEqual((await get()).body, current.body, 'a stale If-Match changed the rules');
    assert.equal(await auditCount(), audits, 'a stale If-Match was audited');
  });

  test('a malformed If-Match is 400 validation_failed naming the header', async () => {
    const body = { defaults: { channelIds: [], repeatIntervalSeconds: 3600 }, rules: [] };
    for (const ifMatch of ['abc', '"1', 'W/"1"', '-1', ',']) {
      const response = await put(body, { 'if-match': ifMatch });
      assert.equal(response.status, 400, ifMatch);
      assert.equal(
        response.body.code,
        'validation_failed',
        `If-Match ${ifMatch}: refused for another reason than validation`,
      );
      assert.equal(
        response.body.errors[0].path,
        'headers.if-match',
        `If-Match ${ifMatch}: the refusal does not name the header`,
      );
    }
  });

  test('an unknown channel is 400 naming where it is used, and nothing changes', async () => {
    const known = await makeChannel();
    const current = await get();
    const audits = await auditCount();
    const missing = newId('chn');
    const response = await put({
      defaults: { channelIds: [known, 'nope'], repeatIntervalSeconds: 3600 },
      rules: [
        { name: 'a', matchers: [], channelIds: [known] },
        { name: 'b', matchers: [], channelIds: [] },
        { name: 'c', matchers: [], channelIds: [missing] },
      ],
    });
    assert.equal(response.status, 400, response.text);
    assert.equal(
      response.body.code,
      'validation_failed',
      'an unknown channel is refused for another reason than validation',
    );
    assert.deepEqual(
      response.body.errors.map((e: { path: string }) => e.path),
      ['defaults.channelIds.1', 'rules.2.channelIds.0'],
      'the refusal does not name exactly the places the unknown channels are used',
    );
    assert.deepEqual((await get()).body, current.body, 'a refused document changed the rules');
    assert.equal(await auditCount(), audits, 'a refused document was audited');
  });

  test('a regex that does not compile is 400 naming the matcher value', async () => {
    const current = await get();
    const response = await put({
      defaults: { channelIds: [], repeatIntervalSeconds: 3600 },
      rules: [
        {
          name: 'bad',
          matchers: [
            { name: 'alertname', op: '=~', value: 'Delivery.*' },
            { name: 'severity', op: '!~', value: '(critical' },
          ],
          channelIds: [],
        },
      ],
    });
    assert.equal(response.status, 400, response.text);
    assert.equal(
      response.body.code,
      'validation_failed',
      'a regex that does not compile is refused for another reason than validation',
    );
    assert.equal(
      response.body.errors[0].path,
      'rules.0.matchers.1.value',
      'the refusal does not name the matcher value that does not compile',
    );
    assert.deepEqual((await get()).body, current.body, 'a refused regex changed the rules');

    // The same text under = is a plain string, not a pattern.
    const literal = await put({
      defaults: { channelIds: [], repeatIntervalSeconds: 3600 },
      rules: [{ name: 'ok', matchers: [{ name: 'severity', op: '=', value: '(critical' }], channelIds: [] }],
    });
    assert.equal(literal.status, 200, literal.text);
  });

  test('RE2 syntax, as Alertmanager: what RE2 cannot compile is 400 naming the value; what JavaScript lacks is fine', async () => {
    const current = await get();
    const withValue = (value: string) => ({
      defaults: { channelIds: [], repeatIntervalSeconds: 3600 },
      rules: [
        {
          name: 'r',
          matchers: [
            { name: 'severity', op: '=', value: 'critical' },
            { name: 'alertname', op: '=~', value },
          ],
          channelIds: [],
        },
      ],
    });
    const refused = [
      '(Delivery)\\1', // a backreference: no linear engine can run it
      'Delivery(?=Failed)',
      'Delivery(?!Failed)',
      '(?<=x)Delivery',
      'Delivery\\Z',
      'a**',
      'a{1001}',
      // Closes the anchoring group early: anchored as text, `^(?:Deliv)|(?:.*)$` would match anything.
      'Deliv)|(?:.*',
    ];
    for (const value of refused) {
      const response = await put(withValue(value));
      assert.equal(response.status, 400, `${value}: ${response.text}`);
      assert.equal(
        response.body.code,
        'validation_failed',
        `${value}: refused for another reason than validation`,
      );
      assert.deepEqual(
        response.body.errors.map((e: { path: string }) => e.path),
        ['rules.0.matchers.1.value'],
        value,
      );
    }
    assert.deepEqual((await get()).body, current.body, 'a refused RE2 pattern changed the rules');

    for (const value of ['(?i)delivery.*', '(?P<kind>Delivery)Failed', '[[:upper:]][[:alpha:]]+', '\\pL+']) {
      const response = await put(withValue(value));
      assert.equal(response.status, 200, `${value}: ${response.text}`);
    }
  });

  /** Distinct (no cache helps) patterns of Unicode classes: much compile time per RE2 instruction. */
  const costlyMatchers = (count: number, repeat: number) => {
    const salt = newId('rul').slice(4, 12);
    return Array.from({ length: count }, (_, m) => ({
      name: 'tenantId',
      op: '=~',
      value: `${salt}x${m}\\pL{${repeat}}`,
    }));
  };
  const asRules = (matchers: unknown[]) =>
    Array.from({ length: Math.ceil(matchers.length / 20) }, (_, r) => ({
      name: `costly ${r}`,
      matchers: matchers.slice(r * 20, r * 20 + 20),
      channelIds: [],
    }));

  test('regexes over 15,000 RE2 instructions in one document: 400 naming the matcher that goes over', async () => {
    const current = await get();
    // 2,000 matchers of this kind would have taken a minute and a gigabyte to compile.
    const response = await put({
      defaults: { channelIds: [], repeatIntervalSeconds: 3600 },
      rules: asRules(costlyMatchers(60, 990)),
    });
    assert.equal(response.status, 400, response.text);
    assert.equal(
      response.body.code,
      'validation_failed',
      'costly regexes are refused for another reason than validation',
    );
    assert.equal(response.body.errors.length, 1, response.text);
    // Each compiles to about 1,000 instructions: the 15th goes over.
    assert.match(
      response.body.errors[0].path,
      /^rules\.0\.matchers\.(13|14|15)\.value$/,
      'the refusal does not name the matcher that goes over the budget',
    );
    assert.match(
      response.body.errors[0].message,
      /15000 RE2 instructions/,
      'the refusal does not name the 15000-instruction budget',
    );
    assert.deepEqual((await get()).body, current.body, 'a refused document changed the rules');

    // The same pattern many times counts once.
    const repeated = costlyMatchers(1, 990);
    const same = await put({
      defaults: { channelIds: [], repeatIntervalSeconds: 3600 },
      rules: asRules(Array.from({ length: 60 }, () => repeated[0])),
    });
    assert.equal(same.status, 200, same.text);
  });

  test('bad bodies are 400 validation_failed naming the field', async () => {
    const rule = { name: 'r', matchers: [], channelIds: [] };
    const defaults = { channelIds: [], repeatIntervalSeconds: 3600 };
    const dup = newId('rul');
    const cases: Array<[unknown, string]> = [
      [{ defaults, rules: [], revision: 3 }, 'revision'],
      [{ defaults, rules: [{ ...rule, colour: 'red' }] }, 'rules.0.colour'],
      [{ defaults: { ...defaults, extra: 1 }, rules: [] }, 'defaults.extra'],
      [
        { defaults, rules: [{ ...rule, matchers: [{ name: 'a', op: '=', value: 'x', flags: 'i' }] }] },
        'rules.0.matchers.0.flags',
      ],
      [{ rules: [] }, 'defaults'],
      [{ defaults }, 'rules'],
      [{ defaults: { channelIds: [] }, rules: [] }, 'defaults.repeatIntervalSeconds'],
      [{ defaults: { ...defaults, repeatIntervalSeconds: 0 }, rules: [] }, 'defaults.repeatIntervalSeconds'],
      [
        { defaults: { ...defaults, repeatIntervalSeconds: 604801 }, rules: [] },
        'defaults.repeatIntervalSeconds',
      ],
      [{ defaults, rules: [{ ...rule, repeatIntervalSeconds: 1.5 }] }, 'rules.0.repeatIntervalSeconds'],
      [{ defaults, rules: [{ ...rule, name: '' }] }, 'rules.0.name'],
      [{ defaults, rules: [{ ...rule, name: 'x'.repeat(201) }] }, 'rules.0.name'],
      [{ defaults, rules: [{ ...rule, id: 'rul_short' }] }, 'rules.0.id'],
      [{ defaults, rules: [{ ...rule, id: newId('chn') }] }, 'rules.0.id'],
      [
        {
          defaults,
          rules: [
            { ...rule, id: dup },
            { ...rule, id: dup },
          ],
        },
        'rules.1.id',
      ],
      [
        { defaults, rules: [{ ...rule, matchers: [{ name: '1abc', op: '=', value: 'x' }] }] },
        'rules.0.matchers.0.name',
      ],
      [
        { defaults, rules: [{ ...rule, matchers: [{ name: 'a', op: '==', value: 'x' }] }] },
        'rules.0.matchers.0.op',
      ],
      [
        { defaults, rules: [{ ...rule, matchers: [{ name: 'a', op: '=', value: 'x'.repeat(1001) }] }] },
        'rules.0.matchers.0.value',
      ],
      [
        {
          defaults,
          rules: [
            { ...rule, matchers: Array.from({ length: 21 }, () => ({ name: 'a', op: '=', value: '' })) },
          ],
        },
        'rules.0.matchers',
      ],
      [{ defaults, rules: Array.from({ length: 101 }, () => rule) }, 'rules'],
      [{ defaults, rules: [{ ...rule, channelIds: ['chn_x', 'chn_x'] }] }, 'rules.0.channelIds'],
      [{ defaults, rules: [{ ...rule, enabled: 'yes' }] }, 'rules.0.enabled'],
      [[], 'body'],
    ];
    const current = await get();
    for (const [body, field] of cases) {
      const response = await put(body);
      assert.equal(response.status, 400, JSON.stringify(body).slice(0, 200));
      assert.equal(
        response.body.code,
        'validation_failed',
        `${field}: refused for another reason than validation`,
      );
      assert.ok(
        response.body.errors.some((e: { path: string }) => e.path.startsWith(field)),
        `${field} → ${JSON.stringify(response.body.errors)}`,
      );
    }
    assert.deepEqual((await get()).body, current.body, 'a bad body changed the rules');
  });

  test('every PUT writes one audit row with the revision and rule count, in the same transaction', async () => {
    const channel = await makeChannel();
    const response = await put({
      defaults: { channelIds: [channel], repeatIntervalSeconds: 3600 },
      rules: [{ name: 'a', matchers: [{ name: 'severity', op: '=', value: 'x' }], channelIds: [channel] }],
    });
    assert.equal(response.status, 200, response.text);
    const rows = await h.database.kysely
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'alerting.rules.replace')
      .where('request_id', '=', response.headers.get('x-request-id'))
      .execute();
    assert.equal(rows.length, 1, 'one PUT did not write exactly one audit row');
    const [row] = rows;
    assert.equal(row?.tenant_id, null, 'the rules audit row is filed under a tenant');
    assert.equal(row?.actor_type, 'platform_key', 'the rules audit row is not by the platform key');
    assert.ok(row?.ip, 'the rules audit row has no client address');
    assert.deepEqual(
      row?.metadata,
      {
        revision: response.body.revision,
        previousRevision: response.body.revision - 1,
        ruleCount: 1,
        channelIds: [channel],
      },
      "the rules audit row's metadata is wrong",
    );
  });

  test('two concurrent PUTs with the same If-Match: exactly one 200, one 409', async () => {
    for (let round = 0; round < 3; round++) {
      const { revision } = (await get()).body;
      const body = (interval: number) => ({
        defaults: { channelIds: [], repeatIntervalSeconds: interval },
        rules: [],
      });
      const responses = await Promise.all([
        put(body(100), { 'if-match': `"${revision}"` }),
        put(body(200), { 'if-match': `"${revision}"` }),
      ]);
      const statuses = responses.map((r) => r.status).sort();
      assert.deepEqual(statuses, [200, 409], responses.map((r) => r.text).join('\n'));
      const winner = responses.find((r) => r.status === 200);
      const read = await get();
      assert.equal(
        read.body.revision,
        revision + 1,
        'two concurrent PUTs bumped the revision other than once',
      );
      assert.deepEqual(read.body, winner?.body, "the stored rules are not the winner's");
    }
  });
});

describe('alert routing rules: the very first write', () => {
  test('two concurrent first PUTs with If-Match "0" (no row yet): exactly one 200, one 409', async () => {
    const fresh = await startHarness();
    try {
      const body = { defaults: { channelIds: [], repeatIntervalSeconds: 3600 }, rules: [] };
      const send = () =>
        fresh.request('PUT', PATH, { token: fresh.platformToken, body, headers: { 'if-match': '"0"' } });
      const responses = await Promise.all([send(), send()]);
      assert.deepEqual(
        responses.map((r) => r.status).sort(),
        [200, 409],
        responses.map((r) => r.text).join('\n'),
      );
      const read = await fresh.request('GET', PATH, { token: fresh.platformToken });
      assert.equal(read.body.revision, 1, 'two first PUTs bumped the revision other than once');
    } finally {
      await fresh.close();
    }
  });
});

describe('alert routing rules: access', () => {
  const body = { defaults: { channelIds: [], repeatIntervalSeconds: 3600 }, rules: [] };

  test('no credential is 401 unauthenticated', async () => {
    for (const method of ['GET', 'PUT']) {
      const response = await h.request(method, PATH, { body: method === 'PUT' ? body : undefined });
      assert.equal(response.status, 401, method);
      assert.equal(
        response.body.code,
        'unauthenticated',
        `${method}: refused for another reason than unauthenticated`,
      );
      assert.equal(
        response.headers.get('www-authenticate'),
        'Bearer',
        `${method}: the 401 does not ask for a Bearer token`,
      );
    }
  });

  test('a tenant session or a tnt_ key is 403 platform_key_required, and nothing changes', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session, { scopes: ['integrations:ADMIN'] });
    const current = await get();
    for (const credential of [{ session }, { token: key.secret }]) {
      for (const method of ['GET', 'PUT']) {
        const response = await h.request(method, PATH, {
          ...credential,
          body: method === 'PUT' ? body : undefined,
        });
        assert.equal(response.status, 403, `${method} ${Object.keys(credential)[0]}: ${response.text}`);
        assert.equal(
          response.body.code,
          'platform_key_required',
          `${method} ${Object.keys(credential)[0]}: refused for another reason than needing a platform key`,
        );
      }
    }
    assert.deepEqual((await get()).body, current.body, 'a refused tenant credential changed the rules');
  });
});

describe('routeAlert', () => {
  const rule = (overrides: Partial<RoutingRule>): RoutingRule => ({
    id: newId('rul'),
    name: 'r',
    enabled: true,
    matchers: [],
    channelIds: [],
    continue: false,
    repeatIntervalSeconds: null,
    ...overrides,
  });
  const doc = (
    rules: RoutingRule[],
    defaults = { channelIds: ['chn_default'], repeatIntervalSeconds: 3600 },
  ) => ({ revision: 1, defaults, rules }) satisfies RoutingDocument;
  const ids = (routes: Array<{ channelId: string }>) => routes.map((r) => r.channelId);

  test('rules in order; the first match without continue stops the walk', () => {
    const d = doc([
      rule({ matchers: [{ name: 'severity', op: '=', value: 'critical' }], channelIds: ['chn_a'] }),
      rule({ matchers: [], channelIds: ['chn_b'] }),
    ]);
    assert.deepEqual(
      routeAlert({ severity: 'critical' }, d),
      [{ channelId: 'chn_a', repeatIntervalSeconds: 3600 }],
      "a critical alert does not go only to the first rule's channel",
    );
    assert.deepEqual(
      ids(routeAlert({ severity: 'warning' }, d)),
      ['chn_b'],
      'a warning does not fall through to the catch-all rule',
    );
  });

  test('continue adds the next matches too; one entry per channel, the first interval winning', () => {
    const d = doc([
      rule({ channelIds: ['chn_a', 'chn_b'], continue: true, repeatIntervalSeconds: 60 }),
      rule({ matchers: [{ name: 'x', op: '=', value: 'nope' }], channelIds: ['chn_c'] }),
      rule({ channelIds: ['chn_b', 'chn_d'], continue: true }),
      rule({ channelIds: ['chn_e'] }),
      rule({ channelIds: ['chn_f'] }),
    ]);
    assert.deepEqual(
      routeAlert({}, d),
      [
        { channelId: 'chn_a', repeatIntervalSeconds: 60 },
        { channelId: 'chn_b', repeatIntervalSeconds: 60 },
        { channelId: 'chn_d', repeatIntervalSeconds: 3600 },
        { channelId: 'chn_e', repeatIntervalSeconds: 3600 },
      ],
      'continue does not add the next matches once each, with the first interval',
    );
  });

  test('a disabled rule is skipped', () => {
    const d = doc([rule({ enabled: false, channelIds: ['chn_a'] }), rule({ channelIds: ['chn_b'] })]);
    assert.deepEqual(ids(routeAlert({}, d)), ['chn_b'], 'a disabled rule still routes');
  });

  test('no match: the defaults, with their interval; a match never adds the defaults', () => {
    const d = doc(
      [
        rule({
          matchers: [{ name: 'alertname', op: '=', value: 'QueueBacklogHigh' }],
          channelIds: ['chn_a'],
        }),
      ],
      { channelIds: ['chn_default', 'chn_other'], repeatIntervalSeconds: 120 },
    );
    assert.deepEqual(
      routeAlert({ alertname: 'DeliveryFailed' }, d),
      [
        { channelId: 'chn_default', repeatIntervalSeconds: 120 },
        { channelId: 'chn_other', repeatIntervalSeconds: 120 },
      ],
      'an alert no rule matches does not go to the defaults with their interval',
    );
    assert.deepEqual(
      routeAlert({ alertname: 'QueueBacklogHigh' }, d),
      [{ channelId: 'chn_a', repeatIntervalSeconds: 120 }],
      "a matched alert does not go to its rule's channel with the default interval",
    );
    // A matching rule with no channels swallows the alert: nothing, not the defaults.
    assert.deepEqual(
      routeAlert({}, doc([rule({ channelIds: [] })])),
      [],
      'a matching rule with no channels does not swallow the alert',
    );
    assert.deepEqual(
      routeAlert({}, doc([], { channelIds: [], repeatIntervalSeconds: 60 })),
      [],
      'empty defaults still route somewhere',
    );
  });

  test('every matcher must match', () => {
    const d = doc([
      rule({
        matchers: [
          { name: 'alertname', op: '=', value: 'DeliveryFailed' },
          { name: 'severity', op: '=', value: 'critical' },
        ],
        channelIds: ['chn_a'],
      }),
    ]);
    assert.deepEqual(
      ids(routeAlert({ alertname: 'DeliveryFailed', severity: 'critical' }, d)),
      ['chn_a'],
      'an alert matching every matcher is not routed by the rule',
    );
    assert.deepEqual(
      ids(routeAlert({ alertname: 'DeliveryFailed', severity: 'warning' }, d)),
      ['chn_default'],
      'an alert matching only some matchers is routed by the rule',
    );
  });

  test('regex matchers are anchored at both ends', () => {
    const only = (value: string) =>
      doc([rule({ matchers: [{ name: 'alertname', op: '=~', value }], channelIds: ['chn_a'] })]);
    const hit = (labels: Record<string, string>, value: string) =>
      ids(routeAlert(labels, only(value)))[0] === 'chn_a';
    assert.equal(
      hit({ alertname: 'DeliveryFailed' }, 'Deliv'),
      false,
      'a regex matches a prefix of the label',
    );
    assert.equal(
      hit({ alertname: 'DeliveryFailed' }, 'Deliv.*'),
      true,
      'a regex with .* does not match the whole label',
    );
    assert.equal(
      hit({ alertname: 'DeliveryFailed' }, 'Failed'),
      false,
      'a regex matches a suffix of the label',
    );
    assert.equal(
      hit({ alertname: 'DeliveryFailed' }, '.*Failed'),
      true,
      'a regex with a leading .* does not match the whole label',
    );
    // The anchors wrap the whole alternation, not just its ends.
    assert.equal(
      hit({ alertname: 'XDeliveryFailed' }, 'DeliveryFailed|Queue.*'),
      false,
      'an alternation matches a label with extra text before it',
    );
    assert.equal(
      hit({ alertname: 'QueueBacklogHigh' }, 'DeliveryFailed|Queue.*'),
      true,
      'an alternation does not match its second branch',
    );
  });

  test('RE2 semantics: inline flags, POSIX classes, Unicode classes; `.` does not match a line break', () => {
    const hit = (value: string, label: string) =>
      ids(
        routeAlert(
          { alertname: label },
          doc([rule({ matchers: [{ name: 'alertname', op: '=~', value }], channelIds: ['chn_a'] })]),
        ),
      )[0] === 'chn_a';
    assert.equal(
      hit('(?i)delivery.*', 'DeliveryFailed'),
      true,
      '(?i) does not make the pattern case-insensitive',
    );
    assert.equal(
      hit('delivery.*', 'DeliveryFailed'),
      false,
      'a pattern matches regardless of case without (?i)',
    );
    assert.equal(hit('[[:upper:]][[:alpha:]]+', 'DeliveryFailed'), true, 'POSIX classes do not match');
    assert.equal(hit('\\pL+', 'Zustellungsfehler\u00e4'), true, '\\pL does not match letters beyond ASCII');
    assert.equal(hit('a.b', 'a\nb'), false, '. matches a line break');
    assert.equal(hit('(?s)a.b', 'a\nb'), true, '(?s) does not let . match a line break');
    assert.equal(hit('a|ab', 'ab'), true, 'the whole value must match, whichever alternative does it');
  });

  test('a stored pattern RE2 refuses (written before RE2) matches nothing, under =~ and !~ alike', () => {
    for (const op of ['=~', '!~'] as const) {
      const d = doc([
        rule({ matchers: [{ name: 'alertname', op, value: 'Delivery(?=Failed)' }], channelIds: ['chn_a'] }),
        rule({ matchers: [], channelIds: ['chn_b'] }),
      ]);
      assert.deepEqual(ids(routeAlert({ alertname: 'DeliveryFailed' }, d)), ['chn_b'], op);
      assert.deepEqual(ids(routeAlert({ alertname: 'QueueBacklogHigh' }, d)), ['chn_b'], op);
    }
  });

  test('the worst routing expressions against a tenant ID: well under a millisecond each', () => {
    const label = worstRoutingLabel();
    for (const value of worstRoutingRegexes()) {
      const d = doc([rule({ matchers: [{ name: 'tenantId', op: '=~', value }], channelIds: ['chn_a'] })]);
      routeAlert({ tenantId: label }, d);
      const runs = 1_000;
      const started = performance.now();
      for (let i = 0; i < runs; i++) routeAlert({ tenantId: label }, d);
      const average = (performance.now() - started) / runs;
      // A backtracking engine needs seconds to minutes for one of these; the bound only has to be
      // generous enough that a loaded machine cannot make it flake.
      assert.ok(average < 5, `${value}: ${average.toFixed(3)} ms per evaluation`);
    }
  });

  test('!= and !~', () => {
    const d = doc([
      rule({
        matchers: [
          { name: 'severity', op: '!=', value: 'info' },
          { name: 'alertname', op: '!~', value: 'Delivery.*' },
        ],
        channelIds: ['chn_a'],
      }),
    ]);
    assert.deepEqual(
      ids(routeAlert({ severity: 'critical', alertname: 'QueueBacklogHigh' }, d)),
      ['chn_a'],
      'an alert that is neither info nor Delivery* is not routed by the rule',
    );
    assert.deepEqual(
      ids(routeAlert({ severity: 'info', alertname: 'QueueBacklogHigh' }, d)),
      ['chn_default'],
      '!= does not keep an info alert out of the rule',
    );
    assert.deepEqual(
      ids(routeAlert({ severity: 'critical', alertname: 'DeliveryFailed' }, d)),
      ['chn_default'],
      '!~ does not keep a Delivery* alert out of the rule',
    );
  });

  test('a missing label matches as the empty string', () => {
    const route = (op: '=' | '!=' | '=~' | '!~', value: string) =>
      ids(
        routeAlert({}, doc([rule({ matchers: [{ name: 'tenantId', op, value }], channelIds: ['chn_a'] })])),
      );
    assert.deepEqual(route('=', ''), ['chn_a'], "a missing label does not match = ''");
    assert.deepEqual(route('!=', ''), ['chn_default'], "a missing label matches != ''");
    assert.deepEqual(route('!=', 'ten_x'), ['chn_a'], "a missing label does not match != 'ten_x'");
    assert.deepEqual(route('=~', '.*'), ['chn_a'], 'a missing label does not match =~ .*');
    assert.deepEqual(route('=~', '.+'), ['chn_default'], 'a missing label matches =~ .+');
    assert.deepEqual(route('!~', '.+'), ['chn_a'], 'a missing label does not match !~ .+');
    // Inherited properties are not labels.
    assert.deepEqual(
      ids(
        routeAlert(
          {},
          doc([rule({ matchers: [{ name: 'constructor', op: '=~', value: '.+' }], channelIds: ['chn_a'] })]),
        ),
      ),
      ['chn_default'],
      'an inherited property such as constructor counts as a label',
    );
  });
});
