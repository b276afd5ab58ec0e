import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeKey, makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness, type TestResponse, type TestSession } from '../helpers/harness.js';
import { auditOf } from '../helpers/operate.js';
import { startReceiver } from '../helpers/receiver.js';

// Receivers listen on 127.0.0.1 only, opened by DELIVERY_ALLOWED_CIDRS; nothing else is contacted.
const ENV = { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' };
const TYPES = '/api/v1/integrations/event-types';
const EVENTS = '/api/v1/integrations/events';

const ORDER_SCHEMA = {
  type: 'object',
  required: ['orderId', 'total'],
  properties: {
    orderId: { type: 'string', pattern: '^ord_[0-9]+$' },
    total: { type: 'number', minimum: 0 },
    email: { type: 'string', format: 'email' },
    lines: { type: 'array', items: { $ref: '#/$defs/line' } },
  },
  additionalProperties: false,
  $defs: { line: { type: 'object', required: ['sku'], properties: { sku: { type: 'string' } } } },
};

let h: Harness;
before(async () => {
  h = await startHarness({ env: ENV, workers: { pollMs: 50 } });
});
after(() => h.close());

const create = (session: TestSession, body: unknown) => h.request('POST', TYPES, { session, body });

describe('the event-type catalog', () => {
  test('create, read, list by name, edit, deprecate, delete; each change audited', async () => {
    const { session } = await makeSignedInTenant(h);
    const made = await create(session, {
      name: 'order.paid',
      description: 'An order was paid',
      schema: ORDER_SCHEMA,
    });
    assert.equal(made.status, 201, `creating an event type answered ${made.status}: ${made.text}`);
    assert.deepEqual(
      { ...made.body, createdAt: undefined, updatedAt: undefined },
      {
        name: 'order.paid',
        description: 'An order was paid',
        schema: ORDER_SCHEMA,
        deprecated: false,
        createdAt: undefined,
        updatedAt: undefined,
      },
      'the created type does not read back as it was sent',
    );
    const again = await create(session, { name: 'order.paid' });
    assert.equal(
      again.status,
      409,
      `a second type of the same name answered ${again.status}, not 409: ${again.text}`,
    );
    for (const name of ['b.second', 'a-first', 'c_third', 'a.first']) {
      assert.equal((await create(session, { name })).status, 201, `creating ${name} failed`);
    }
    const names: string[] = [];
    let cursor: string | null = null;
    do {
      const page: TestResponse = await h.request(
        'GET',
        `${TYPES}?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        {
          session,
        },
      );
      assert.equal(page.status, 200, page.text);
      assert.ok(page.body.data.length <= 2, 'a page holds more than its limit');
      names.push(...page.body.data.map((t: { name: string }) => t.name));
      cursor = page.body.nextCursor;
    } while (cursor);
    assert.deepEqual(
      names,
      ['a-first', 'a.first', 'b.second', 'c_third', 'order.paid'],
      'the list is not every type once, by name',
    );
    const badCursor = await h.request('GET', `${TYPES}?cursor=bm90IGEgbmFtZSE`, { session });
    assert.equal(badCursor.status, 400, `a cursor this list did not make answered ${badCursor.status}`);

    const edited = await h.request('PATCH', `${TYPES}/order.paid`, {
      session,
      body: { description: null, deprecated: true },
    });
    assert.equal(edited.status, 200, edited.text);
    assert.equal(edited.body.description, null, 'description: null did not clear the description');
    assert.equal(edited.body.deprecated, true, 'the type is not deprecated after the edit');
    assert.deepEqual(edited.body.schema, ORDER_SCHEMA, 'an edit that did not name the schema changed it');
    assert.ok(edited.body.updatedAt > made.body.updatedAt, 'updatedAt did not move on an edit');
    const read = await h.request('GET', `${TYPES}/order.paid`, { session });
    assert.deepEqual(read.body, edited.body, 'the type read back differs from the edit’s answer');
    const empty = await h.request('PATCH', `${TYPES}/order.paid`, { session, body: {} });
    assert.equal(empty.status, 200, empty.text);
    assert.deepEqual(empty.body, edited.body, 'an edit of nothing changed the type (or its updatedAt)');

    const gone = await h.request('DELETE', `${TYPES}/order.paid`, { session });
    assert.equal(gone.status, 204, gone.text);
    assert.equal(
      (await h.request('GET', `${TYPES}/order.paid`, { session })).status,
      404,
      'a deleted type is still there',
    );
    assert.equal(
      (await h.request('GET', `${TYPES}/NOT%20A%20NAME`, { session })).status,
      404,
      'a name that cannot exist is not 404',
    );
    const actions = (await auditOf(h, session, 'order.paid')).map((e) => e.action).sort();
    assert.deepEqual(
      actions,
      ['event_type.create', 'event_type.delete', 'event_type.update'],
      'the audit log does not show each change once',
    );
  });

  test('a schema that cannot be used is 400 naming the field, and nothing is saved', async () => {
    const { session } = await makeSignedInTenant(h);
    const cases: Array<[string, unknown, string]> = [
      ['does not compile', { type: 'no-such-type' }, 'schema'],
      ['over 64 KiB', { description: 'x'.repeat(65 * 1024) }, 'schema'],
      [
        'remote $ref',
        { properties: { a: { $ref: 'https://example.com/s.json' } } },
        'schema.properties.a.$ref',
      ],
      ['a pattern RE2 refuses', { properties: { a: { pattern: '(?=x)' } } }, 'schema.properties.a.pattern'],
      [
        'a patternProperties key RE2 refuses',
        { patternProperties: { '(a)\\1': {} } },
        'schema.patternProperties',
      ],
      ['another draft', { $schema: 'http://json-schema.org/draft-07/schema#' }, 'schema.$schema'],
      ['an $id', { $id: 'https://example.com/mine' }, 'schema.$id'],
      // A $ref into what is not walked as a schema would run without being charged for (a hostile chain).
      [
        'a $ref under a keyword that is no schema keyword',
        { x: { a0: { anyOf: [{ type: 'string' }, { type: 'integer' }] } }, $ref: '#/x/a0' },
        'schema.$ref',
      ],
      ['a $ref into an enum', { enum: [{ type: 'string' }], $ref: '#/enum/0' }, 'schema.$ref'],
      [
        'a $ref to an anchor no schema declares',
        { properties: { a: { $ref: '#nowhere' } } },
        'schema.properties.a.$ref',
      ],
      ['an unknown format', { properties: { a: { format: 'nope' } } }, 'schema.properties.a.format'],
      ['a bad name', undefined, 'name'],
    ];
    for (const [why, schema, path] of cases) {
      const name = why === 'a bad name' ? 'Not A Name' : 'x.y';
      const r = await create(session, { name, schema });
      assert.equal(r.status, 400, `a schema with ${why} answered ${r.status}: ${r.text}`);
      assert.equal(r.body.code, 'validation_failed', `a schema with ${why} is not validation_failed`);
      assert.equal(
        r.body.errors?.[0]?.path,
        path,
        `a schema with ${why} names ${r.body.errors?.[0]?.path}, not ${path}`,
      );
    }
    const list = await h.request('GET', TYPES, { session });
    assert.deepEqual(list.body.data, [], 'a refused type was saved');
    assert.equal((await create(session, { name: 'x.y' })).status, 201, 'a type without a schema is refused');
    const badEdit = await h.request('PATCH', `${TYPES}/x.y`, { session, body: { schema: { type: 7 } } });
    assert.equal(badEdit.status, 400, `an edit to a schema that does not compile answered ${badEdit.status}`);
    assert.equal(
      (await h.request('GET', `${TYPES}/x.y`, { session })).body.schema,
      null,
      'a refused edit was saved',
    );
  });

  test('keys: READER reads, ADMIN changes; an OPERATOR key cannot change the catalog', async () => {
    const { session } = await makeSignedInTenant(h);
    const reader = await makeKey(h, session, { scopes: ['integrations:READER'] });
    const operator = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
    const admin = await makeKey(h, session, { scopes: ['integrations:ADMIN'] });
    assert.equal(
      (await h.request('GET', TYPES, { token: reader.secret })).status,
      200,
      'a READER key cannot list the catalog',
    );
    const denied = await h.request('POST', TYPES, { token: operator.secret, body: { name: 'k.op' } });
    assert.equal(denied.status, 403, `an OPERATOR key changed the catalog: ${denied.status}`);
    assert.equal(denied.body.code, 'insufficient_scope', 'an OPERATOR key is refused for another reason');
    assert.equal(
      (await h.request('POST', TYPES, { token: admin.secret, body: { name: 'k.admin' } })).status,
      201,
      'an ADMIN key cannot add a type',
    );
    assert.equal(
      (await h.request('DELETE', `${TYPES}/k.admin`, { token: admin.secret })).status,
      204,
      'an ADMIN key cannot delete a type',
    );
  });
});

describe('publishing against the catalog', () => {
  test('a retry with the same Idempotency-Key gets its first answer, even after the schema changed to refuse it', async () => {
    const { session } = await makeSignedInTenant(h);
    const made = await create(session, { name: 'order.kept', schema: { type: 'object' } });
    assert.equal(made.status, 201, `the type could not be registered: ${made.text}`);
    const publish = (data: object, path = EVENTS, key = 'retry-1') =>
      h.request('POST', path, {
        session,
        headers: path === EVENTS ? { 'idempotency-key': key } : {},
        body:
          path === EVENTS
            ? { type: 'order.kept', data }
            : { events: [{ type: 'order.kept', data, idempotencyKey: key }] },
      });
    const first = await publish({ a: 1 });
    assert.equal(first.status, 202, first.text);
    const inBatch = await publish({ a: 2 }, `${EVENTS}/batch`, 'retry-2');
    assert.equal(inBatch.status, 202, inBatch.text);
    const changed = await h.request('PATCH', `${TYPES}/order.kept`, {
      session,
      body: { schema: { type: 'object', required: ['b'] } },
    });
    assert.equal(changed.status, 200, changed.text);

    const again = await publish({ a: 1 });
    assert.equal(again.status, 202, `the retry was answered ${again.status}: ${again.text}`);
    assert.deepEqual(again.body, first.body, 'the retry did not get the first answer');
    const batchAgain = await publish({ a: 2 }, `${EVENTS}/batch`, 'retry-2');
    assert.deepEqual(batchAgain.body, inBatch.body, 'the batch item retried did not get its first answer');
    const fresh = await publish({ a: 1 }, EVENTS, 'retry-3');
    assert.equal(fresh.status, 400, `a new key is not checked against the new schema: ${fresh.text}`);
    const otherBody = await publish({ a: 9 });
    assert.equal(otherBody.status, 400, `another body with the key skipped the schema: ${otherBody.text}`);
  });

  test('data that does not match is 400 with paths from /data; a match, an unregistered type and a deprecated one are delivered', async (t) => {
    const { session } = await makeSignedInTenant(h);
    const receiver = await startReceiver(t);
    await makeWebhookConnection(h, session, receiver.url());
    assert.equal(
      (await create(session, { name: 'order.paid', schema: ORDER_SCHEMA })).status,
      201,
      'the order.paid type could not be registered',
    );
    const bad = await h.request('POST', EVENTS, {
      session,
      body: { type: 'order.paid', data: { orderId: 'x', total: -1, lines: [{}], extra: 1 } },
    });
    assert.equal(bad.status, 400, `data not matching the schema answered ${bad.status}: ${bad.text}`);
    assert.equal(bad.body.code, 'validation_failed', 'a mismatch is not validation_failed');
    for (const error of bad.body.errors)
      assert.match(error.path, /^\/data(\/|$)/, `an error path does not start at /data: ${error.path}`);
    assert.ok(bad.body.errors.length >= 1, 'a mismatch has no errors listed');

    const good = await h.request('POST', EVENTS, {
      session,
      body: {
        type: 'order.paid',
        data: { orderId: 'ord_1', total: 5, email: 'a@example.com', lines: [{ sku: 'a' }] },
      },
    });
    assert.equal(good.status, 202, `matching data answered ${good.status}: ${good.text}`);
    assert.equal(good.body.warnings, undefined, 'an event of a current type carries warnings');
    const unregistered = await h.request('POST', EVENTS, {
      session,
      body: { type: 'not.registered', data: { any: 1 } },
    });
    assert.equal(unregistered.status, 202, `an unregistered type is refused: ${unregistered.text}`);

    await h.request('PATCH', `${TYPES}/order.paid`, { session, body: { deprecated: true } });
    const old = await h.request('POST', EVENTS, {
      session,
      body: { type: 'order.paid', data: { orderId: 'ord_2', total: 1 } },
    });
    assert.equal(old.status, 202, `an event of a deprecated type is refused: ${old.text}`);
    assert.deepEqual(
      old.body.warnings,
      ['event type order.paid is deprecated'],
      'a deprecated type’s answer has no warning',
    );
    const keyed = await h.request('POST', EVENTS, {
      session,
      headers: { 'idempotency-key': 'k1' },
      body: { type: 'order.paid', data: { orderId: 'ord_3', total: 1 } },
    });
    assert.deepEqual(
      keyed.body.warnings,
      ['event type order.paid is deprecated'],
      'a keyed publish of a deprecated type has no warning',
    );

    const arrived = await receiver.waitFor(4);
    const ids = new Set(arrived.map((a) => JSON.parse(a.body).id));
    for (const r of [good, unregistered, old, keyed])
      assert.ok(ids.has(r.body.id), `accepted event ${r.body.id} was not delivered`);
  });

  test('in a batch, an event that does not match is that item’s error; the others go on, with their warnings', async () => {
    const { session } = await makeSignedInTenant(h);
    await create(session, { name: 'order.paid', schema: ORDER_SCHEMA });
    await create(session, { name: 'order.old', deprecated: true });
    const r = await h.request('POST', `${EVENTS}/batch`, {
      session,
      body: {
        events: [
          { type: 'order.paid', data: { orderId: 'ord_1', total: 1 } },
          { type: 'order.paid', data: { orderId: 'ord_2' } },
          { type: 'order.old', data: {} },
          { type: 'order.paid', data: { orderId: 'ord_3', total: 'x' }, idempotencyKey: 'b1' },
          { type: 'other', data: {} },
        ],
      },
    });
    assert.equal(r.status, 202, r.text);
    const [ok, missing, old, wrongType, other] = r.body.data;
    assert.match(ok.id, /^evt_/, 'a matching event of the batch was not published');
    assert.equal(missing.error?.code, 'validation_failed', 'an event missing a required field was published');
    assert.deepEqual(
      missing.error.errors,
      [{ path: '/data/total', message: 'is required' }],
      'the item’s error does not name /data/total',
    );
    assert.match(
      missing.error.detail,
      /^events\.1: \/data\/total/,
      'the item’s detail does not say which event',
    );
    assert.deepEqual(
      old.warnings,
      ['event type order.old is deprecated'],
      'the deprecated item has no warning',
    );
    assert.equal(
      wrongType.error?.errors?.[0]?.path,
      '/data/total',
      'a keyed item’s mismatch is not its error',
    );
    assert.match(other.id, /^evt_/, 'an unregistered type in a batch was refused');
  });

  test('publishes of two tenants at once, one type name with two schemas: each is checked by its own tenant’s', async () => {
    // Publishes read their types in one statement per turn, whatever their tenants (event-types/catalog.ts).
    const a = await makeSignedInTenant(h);
    const b = await makeSignedInTenant(h);
    await create(a.session, { name: 'shared.name', schema: { type: 'object', required: ['fromA'] } });
    await create(b.session, { name: 'shared.name', schema: { type: 'object', required: ['fromB'] } });
    const publish = (session: TestSession, data: object) =>
      h.request('POST', EVENTS, { session, body: { type: 'shared.name', data } });
    const ROUNDS = 10;
    const answers = await Promise.all(
      Array.from({ length: ROUNDS }, () => [
        publish(a.session, { fromA: 1 }),
        publish(a.session, { fromB: 1 }),
        publish(b.session, { fromB: 1 }),
        publish(b.session, { fromA: 1 }),
      ]).flat(),
    );
    const statuses = answers.map((r) => r.status);
    const expected = Array.from({ length: ROUNDS }, () => [202, 400, 202, 400]).flat();
    assert.deepEqual(statuses, expected, 'an event was checked by the other tenant’s schema, or by none');
  });

  test('a change made by another process is used at the next publish', async () => {
    const second = await startHarness({ env: ENV, testDatabase: h.testDatabase, keyring: h.keyring });
    try {
      const { session } = await makeSignedInTenant(h);
      await create(session, { name: 'p.x', schema: { type: 'object', required: ['a'] } });
      const publish = (harness: Harness) =>
        harness.request('POST', EVENTS, { session, body: { type: 'p.x', data: { b: 1 } } });
      assert.equal((await publish(second)).status, 400, 'the second process did not apply the schema');
      const edit = await second.request('PATCH', `${TYPES}/p.x`, {
        session,
        body: { schema: { type: 'object', required: ['b'] } },
      });
      assert.equal(edit.status, 200, edit.text);
      assert.equal(
        (await publish(h)).status,
        202,
        'the first process kept the old schema after another process changed it',
      );
      await second.request('PATCH', `${TYPES}/p.x`, { session, body: { schema: null } });
      assert.equal(
        (await h.request('POST', EVENTS, { session, body: { type: 'p.x', data: {} } })).status,
        202,
        'a removed schema still applies',
      );
    } finally {
      await second.close();
    }
  });
});
